// What the pipeline hands the document store for one text: its chunks, each with the words it is
// found by, and the text's SHA-256. All come from one pass in the same thread, so a chunking
// thread does all the CPU work of indexing and the store only writes rows.
import { createHash } from 'node:crypto';
import type { Analyzer } from '../../domain/search-words.js';
import { type ChunkOptions, type ChunkPiece, type ChunkPlan, chunkText, StreamChunker } from './chunker.js';

export interface IndexPlan extends ChunkPlan {
  /** SHA-256 of the text's UTF-8, hex (the document's `content_sha256`). */
  contentSha256: string;
}

export function chunkForIndex(text: string, options: ChunkOptions, analyzer: Analyzer): IndexPlan {
  const plan = chunkText(text, options);
  for (const chunk of plan.chunks) chunk.words = analyzer.words(chunk.text);
  return { ...plan, contentSha256: createHash('sha256').update(text, 'utf8').digest('hex') };
}

/** One chunk with its search words, as IndexChunker gives it (numbered by its reader). */
export type IndexPiece = ChunkPiece & { words: string };

/**
 * chunkForIndex over a text that arrives in pieces, holding only a window of it (StreamChunker):
 * each chunk comes with its words as soon as it is planned, and the SHA-256 is taken as the text
 * goes by. The chunks, words, token count and hash are chunkForIndex's on the joined text.
 */
export class IndexChunker {
  private readonly chunker: StreamChunker;
  private readonly hash = createHash('sha256');
  private readonly onSegment = (segment: string) => {
    this.hash.update(segment, 'utf8');
  };
  private sha256: string | null = null;

  constructor(
    options: ChunkOptions,
    private readonly analyzer: Analyzer,
    internal: { windowChars?: number } = {},
  ) {
    this.chunker = new StreamChunker(options, internal);
  }

  *push(piece: string): Generator<IndexPiece> {
    for (const chunk of this.chunker.push(piece, this.onSegment)) yield this.withWords(chunk);
  }

  *end(): Generator<IndexPiece> {
    for (const chunk of this.chunker.end(this.onSegment)) yield this.withWords(chunk);
    this.sha256 ??= this.hash.digest('hex');
  }

  /** Known once `end()`'s chunks have all been read. */
  totals(): { tokenCount: number; contentSha256: string } {
    if (this.sha256 === null) throw new Error('the totals are known only once the text has ended');
    return { tokenCount: this.chunker.tokenCount, contentSha256: this.sha256 };
  }

  private withWords(chunk: ChunkPiece): IndexPiece {
    return { ...chunk, words: this.analyzer.words(chunk.text) };
  }
}
