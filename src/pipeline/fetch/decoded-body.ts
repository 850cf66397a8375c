// Turns a response body into the decoded bytes handed to storage. The byte cap is applied to the
// decoded stream as it flows and zlib only inflates what is read, so a small compressed "bomb"
// stops at the cap instead of being inflated in full.
import { pipeline, Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { FetchError } from './errors.js';

export const ACCEPT_ENCODING = 'gzip, deflate, br';

const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  // RFC 9110 "deflate" is zlib-wrapped; createUnzip also copes with servers that send gzip here.
  deflate: () => zlib.createUnzip(),
  br: () => zlib.createBrotliDecompress(),
};

// We only ever ask for one coding; a longer stack is not something a real server sends.
const MAX_STACKED_CODINGS = 2;

/** The codings to undo, outermost last as in the header; identity is dropped. */
export function parseContentEncoding(header: string | string[] | undefined): string[] {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  const codings = values
    .flatMap((value) => value.split(','))
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const unknown = codings.find((coding) => !Object.hasOwn(DECODERS, coding));
  if (unknown !== undefined) {
    return failUnsupported(`Content-Encoding "${unknown.slice(0, 40)}" is not supported`);
  }
  if (codings.length > MAX_STACKED_CODINGS) return failUnsupported('too many stacked Content-Encodings');
  return codings;
}

function failUnsupported(message: string): never {
  throw new FetchError('unsupported_format', message, false);
}

export function decodeBody(raw: Readable, codings: string[]): Readable {
  const decoders = codings
    .slice()
    .reverse()
    .map((coding) => (DECODERS[coding] as () => Transform)());
  const [first, ...rest] = decoders;
  if (first === undefined) return raw;
  // Errors surface through the returned stream; pipeline also tears the socket down with it.
  return pipeline(raw, first, ...rest, () => {}) as unknown as Readable;
}

/**
 * `source` re-emitted until more than `maxBytes` have passed, then an error. Errors from
 * upstream go through `toError` so the consumer always sees a FetchError.
 */
export function limitBytes(source: Readable, maxBytes: number, toError: (err: unknown) => unknown): Readable {
  async function* forward(): AsyncGenerator<Buffer> {
    let seen = 0;
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        seen += chunk.length;
        if (seen > maxBytes) {
          throw new FetchError(
            'too_large',
            `the response body exceeds the limit of ${maxBytes} bytes`,
            false,
          );
        }
        yield chunk;
      }
    } catch (err) {
      throw toError(err);
    }
  }
  return Readable.from(forward(), { objectMode: false });
}
