// What a chunker is asked for: the token window, its overlap, and what the text is.
import type { IndexOptions } from '../../domain/ports.js';
import type { ChunkRow } from '../../domain/types.js';

/** 1-based page number; UTF-16 offsets into the text; spans in order and non-overlapping. */
export interface PageSpan {
  page: number;
  charStart: number;
  charEnd: number;
}

/** The document's chunk settings (DocumentPipeline's IndexOptions), and its pages if it has any. */
export interface ChunkOptions extends IndexOptions {
  pages?: PageSpan[] | null;
}

export interface ChunkPlan {
  chunks: ChunkRow[];
  /** Tokens in the whole text. */
  tokenCount: number;
}

/** The largest number of tokens one character can take (a surrogate pair is four UTF-8 bytes). */
const MIN_CHUNK_SIZE = 4;

/** Throws RangeError unless chunkSize and chunkOverlap are usable (both chunkers check alike). */
export function checkChunkOptions({ chunkSize, chunkOverlap }: ChunkOptions): void {
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE) {
    throw new RangeError(`chunkSize must be an integer ≥ ${MIN_CHUNK_SIZE}, got ${chunkSize}`);
  }
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    throw new RangeError(`chunkOverlap must be an integer in [0, chunkSize), got ${chunkOverlap}`);
  }
}
