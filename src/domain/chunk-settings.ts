// How a document is cut into chunks: the bounds every ingest form, reprocess, the MCP tools and the
// command line accept, the defaults, and the rule that ties the two numbers together.
import { ERRORS } from './errors.js';

export interface ChunkSettings {
  chunkSize: number;
  chunkOverlap: number;
}

/**
 * The tokenizer whose tokens chunk sizes count. Named here, apart from the chunker, so that naming
 * it (the ingest limits do) does not load its vocabulary, which only pipeline threads need.
 */
export const TOKENIZER_NAME = 'o200k_base';

/** Tokens per chunk. */
export const CHUNK_SIZE = { minimum: 128, maximum: 4096, default: 512 } as const;
/** Tokens shared by consecutive chunks; also below the chunk size. */
export const CHUNK_OVERLAP = { minimum: 0, maximum: 512, default: 64 } as const;

export const DEFAULT_CHUNKS: ChunkSettings = {
  chunkSize: CHUNK_SIZE.default,
  chunkOverlap: CHUNK_OVERLAP.default,
};

/** The settings a request gave, each missing one at its default. */
export function chunkSettingsOf(given: {
  chunkSize?: number | null;
  chunkOverlap?: number | null;
}): ChunkSettings {
  return {
    chunkSize: given.chunkSize ?? DEFAULT_CHUNKS.chunkSize,
    chunkOverlap: given.chunkOverlap ?? DEFAULT_CHUNKS.chunkOverlap,
  };
}

/** The overlap must be smaller than the chunk (the bounds of each are the schemas'). */
export function checkChunkSettings(chunks: ChunkSettings): void {
  if (chunks.chunkOverlap >= chunks.chunkSize) {
    throw ERRORS.invalid('chunk_overlap must be smaller than chunk_size.', [
      {
        pointer: '/chunk_overlap',
        message: `must be smaller than chunk_size (${chunks.chunkSize}), got ${chunks.chunkOverlap}`,
      },
    ]);
  }
}
