// What the pipeline hands the document store for one text: its chunks, each with the words it is
// found by, and the text's SHA-256. All come from one pass in the same thread, so a chunking
// thread does all the CPU work of indexing and the store only writes rows.
import { createHash } from 'node:crypto';
import type { Analyzer } from '../../domain/search-words.js';
import { type ChunkOptions, type ChunkPlan, chunkText } from './chunker.js';

export interface IndexPlan extends ChunkPlan {
  /** SHA-256 of the text's UTF-8, hex (the document's `content_sha256`). */
  contentSha256: string;
}

export function chunkForIndex(text: string, options: ChunkOptions, analyzer: Analyzer): IndexPlan {
  const plan = chunkText(text, options);
  for (const chunk of plan.chunks) chunk.words = analyzer.words(chunk.text);
  return { ...plan, contentSha256: createHash('sha256').update(text, 'utf8').digest('hex') };
}
