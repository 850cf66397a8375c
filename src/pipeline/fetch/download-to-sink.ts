// The worker's entry point for URL documents: open the URL, retrying transient failures for as
// long as a pre-signed URL can be expected to stay valid, then hand the body to storage.
import { setTimeout as sleep } from 'node:timers/promises';
import { equalJitter, exponentialBackoffMs } from '../../domain/backoff.js';
import { FetchError } from './errors.js';
import { type FetchedBody, type FetchOptions, openUrl } from './open-url.js';

// Pre-signed URLs may expire 60 s after submission; retrying past ~45 s would mostly turn a
// transient failure into a misleading 403.
const DEFAULT_RETRY_WITHIN_MS = 45_000;
const FIRST_BACKOFF_MS = 400;
const MAX_BACKOFF_MS = 8_000;

function backoffMs(attempt: number): number {
  const ceiling = exponentialBackoffMs(attempt, { baseMs: FIRST_BACKOFF_MS, maxMs: MAX_BACKOFF_MS });
  // Jitter so documents from one batch that failed together do not retry in lockstep.
  return Math.round(equalJitter(ceiling));
}

async function downloadOnce(
  url: URL,
  opts: FetchOptions,
  sink: (body: FetchedBody) => Promise<number>,
): Promise<{ bytes: number; contentType: string | null; finalUrl: URL }> {
  const body = await openUrl(url, opts);
  let streamError: unknown = null;
  body.stream.on('error', (err) => {
    streamError = err;
  });
  try {
    const bytes = await sink(body);
    return { bytes, contentType: body.contentType, finalUrl: body.finalUrl };
  } catch (err) {
    // A sink usually fails because the stream did; that error says what actually happened.
    throw streamError instanceof FetchError ? streamError : err;
  } finally {
    body.stream.destroy();
  }
}

/**
 * Retries transient failures (5xx, resets, connect timeouts) with jittered backoff for up to
 * `retryWithinMs` (45 s), including a connection that breaks mid-body — so `sink` may be called
 * more than once, and each call must replace whatever an earlier call stored. Errors that are
 * not transient FetchErrors (a failing sink, an abort) are rethrown at once.
 */
export async function downloadToSink(
  url: URL,
  opts: FetchOptions & { retryWithinMs?: number },
  sink: (body: FetchedBody) => Promise<number>,
): Promise<{ bytes: number; contentType: string | null; finalUrl: URL }> {
  const giveUpAt = Date.now() + (opts.retryWithinMs ?? DEFAULT_RETRY_WITHIN_MS);
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await downloadOnce(url, opts, sink);
    } catch (err) {
      if (!(err instanceof FetchError) || !err.transient) throw err;
      const delay = backoffMs(attempt);
      if (Date.now() + delay > giveUpAt) throw err;
      try {
        await sleep(delay, undefined, opts.signal ? { signal: opts.signal } : {});
      } catch (sleepError) {
        // Same contract as openUrl: an abort surfaces as the caller's own reason.
        throw opts.signal?.aborted ? opts.signal.reason : sleepError;
      }
    }
  }
}
