// What the pipeline hands the document store for one text: its chunks, each with the words it is
// found by. Both come from one pass in the same thread, so a chunking thread does all the CPU work
// of indexing and the store only writes rows.
import { searchWords } from '../../domain/search-words.js';
import { type ChunkOptions, type ChunkPlan, chunkText } from './chunker.js';

export function chunkForIndex(text: string, options: ChunkOptions): ChunkPlan {
  const plan = chunkText(text, options);
  for (const chunk of plan.chunks) chunk.words = searchWords(chunk.text);
  return plan;
}
