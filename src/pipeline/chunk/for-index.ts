// What the pipeline hands the document store for one text: its chunks, each with the words it is
// found by, the language those words were analysed in, and the text's SHA-256. All come from one
// pass in the same thread, so a chunking thread does all the CPU work of indexing and the store
// only writes rows.
import { createHash } from 'node:crypto';
import { detectLanguage } from '../../domain/language-detection.js';
import {
  type Analyzer,
  documentAnalyzer,
  documentLanguage,
  type SearchLanguage,
} from '../../domain/search-words.js';
import { chunkText } from './chunker.js';
import type { ChunkOptions, ChunkPlan } from './options.js';
import { type ChunkPiece, StreamChunker } from './stream-chunker.js';

export interface IndexPlan extends ChunkPlan {
  /** SHA-256 of the text's UTF-8, hex (the document's `content_sha256`). */
  contentSha256: string;
  /** The language the words were analysed in (null: without stemming). */
  language: string | null;
}

/**
 * How a text's words are analysed: in one given analysis, or in the document's language, the one
 * given at ingest or else told from its first chunk (the deployment's SEARCH_LANGUAGE decides
 * what happens when it cannot be told).
 */
export type Analysis = Analyzer | { given: string | null; configured: SearchLanguage };

/** Resolves an Analysis once the first chunk's text is known (null: the text has no chunk). */
function resolve(
  analysis: Analysis,
  firstText: string | null,
): { language: string | null; analyzer: Analyzer } {
  if ('words' in analysis) return { language: analysis.language, analyzer: analysis };
  const language = documentLanguage(
    analysis.given,
    () => (firstText === null ? null : detectLanguage(firstText)),
    analysis.configured,
  );
  return { language, analyzer: documentAnalyzer(language) };
}

export function chunkForIndex(text: string, options: ChunkOptions, analysis: Analysis): IndexPlan {
  const plan = chunkText(text, options);
  const { language, analyzer } = resolve(analysis, plan.chunks[0]?.text ?? null);
  for (const chunk of plan.chunks) chunk.words = analyzer.words(chunk.text);
  return { ...plan, language, contentSha256: createHash('sha256').update(text, 'utf8').digest('hex') };
}

/** One chunk with its search words, as IndexChunker gives it (numbered by its reader). */
export type IndexPiece = ChunkPiece & { words: string };

/**
 * chunkForIndex over a text that arrives in pieces, holding only a window of it (StreamChunker):
 * each chunk comes with its words as soon as it is planned, and the SHA-256 is taken as the text
 * goes by. The chunks, words, language, token count and hash are chunkForIndex's on the joined text.
 */
export class IndexChunker {
  private readonly chunker: StreamChunker;
  private readonly hash = createHash('sha256');
  private readonly onSegment = (segment: string) => {
    this.hash.update(segment, 'utf8');
  };
  private sha256: string | null = null;
  private resolved: { language: string | null; analyzer: Analyzer } | null = null;

  constructor(
    options: ChunkOptions,
    private readonly analysis: Analysis,
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
    this.resolved ??= resolve(this.analysis, null);
  }

  /** Known once `end()`'s chunks have all been read. */
  totals(): { tokenCount: number; contentSha256: string; language: string | null } {
    if (this.sha256 === null || this.resolved === null) {
      throw new Error('the totals are known only once the text has ended');
    }
    return {
      tokenCount: this.chunker.tokenCount,
      contentSha256: this.sha256,
      language: this.resolved.language,
    };
  }

  private withWords(chunk: ChunkPiece): IndexPiece {
    this.resolved ??= resolve(this.analysis, chunk.text);
    return { ...chunk, words: this.resolved.analyzer.words(chunk.text) };
  }
}
