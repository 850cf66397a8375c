// One way for a document store to read an IndexResult, whichever form its chunks come in.
import type { ChunkRow, IndexResult, IndexTotals } from './types.js';

export interface ChunkBatches {
  /** The chunks in order, a batch at a time (a list is one batch). */
  batches: AsyncIterable<readonly ChunkRow[]>;
  /** Valid once `batches` has been read to its end. */
  totals(): IndexTotals;
}

export function chunkBatchesOf(result: IndexResult): ChunkBatches {
  if ('totals' in result) return { batches: result.chunks, totals: () => result.totals() };
  const { chunks, tokenCount, contentSha256, ocrPages, language } = result;
  return {
    batches: (async function* () {
      if (chunks.length > 0) yield chunks;
    })(),
    totals: () => ({ tokenCount, contentSha256, ocrPages, ...(language === undefined ? {} : { language }) }),
  };
}

/** Every chunk of a result, read to its end, with its totals. */
export async function collectChunks(
  result: IndexResult,
): Promise<{ chunks: ChunkRow[]; totals: IndexTotals }> {
  const { batches, totals } = chunkBatchesOf(result);
  const chunks: ChunkRow[] = [];
  for await (const batch of batches) for (const chunk of batch) chunks.push(chunk);
  return { chunks, totals: totals() };
}
