// Helpers every embedding adapter shares: vectors leave an adapter L2-normalised (so a dot product
// is a cosine) and of the one length the profile has, whatever the provider returned.
import { EmbeddingError } from '../../domain/ports.js';

/** Divides by the vector's length; a zero vector stays zero (it then matches nothing). */
export function normalise(values: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(values);
  let sum = 0;
  for (const v of out) sum += v * v;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] = out[i]! / norm;
  return out;
}

/**
 * Keeps the profile's length: the configured one, else the first answer's. Returns the length to
 * remember; throws dimension_mismatch when a vector differs.
 */
export function checkDimensions(vectors: readonly Float32Array[], expected: number | null): number | null {
  let length = expected;
  for (const v of vectors) {
    if (length === null) length = v.length;
    if (v.length !== length) {
      throw new EmbeddingError(
        'dimension_mismatch',
        `the model answered vectors of ${v.length} dimensions where ${length} were expected`,
      );
    }
  }
  return length;
}

/** At most `limit` tasks at once; the rest wait in order. */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
