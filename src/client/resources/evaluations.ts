// How DocindexClient waits for an evaluation: polling its status until it is done or failed.
import { WaitTimeoutError } from '../errors.js';
import { sleep } from '../http-exchange.js';
import type { RequestOptions } from '../options.js';
import type { Evaluation } from '../types.js';

/** How often and how long pollEvaluation polls, and what it tells after each poll. */
export interface EvaluationWaitOptions extends RequestOptions {
  timeoutMs?: number;
  pollMs?: number;
  onProgress?: (e: Evaluation) => void;
}

/**
 * Polls `getEvaluation` every `pollMs` (default 1 s) until the evaluation is `done` or `failed`,
 * and returns it. Throws WaitTimeoutError past `timeoutMs` (default 1 hour).
 */
export async function pollEvaluation(
  getEvaluation: (options: RequestOptions) => Promise<Evaluation>,
  id: string,
  options: EvaluationWaitOptions,
): Promise<Evaluation> {
  const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
  for (;;) {
    const evaluation = await getEvaluation({ signal: options.signal });
    options.onProgress?.(evaluation);
    if (evaluation.status === 'done' || evaluation.status === 'failed') return evaluation;
    if (Date.now() >= deadline) throw new WaitTimeoutError([id], [], options.timeoutMs ?? 3_600_000);
    await sleep(options.pollMs ?? 1000, options.signal);
  }
}
