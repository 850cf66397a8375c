// The chunk stage: splits a document's extracted text into token-bounded, overlapping chunks for
// indexing, with each chunk's exact o200k_base token count, UTF-16 offsets and page range.
//
// Why it is built this way:
// - The text is tokenized once, by encoder.ts (gpt-tokenizer's tokens, each distinct pre-token
//   encoded once per thread). Per-token UTF-16 lengths come from the encoder's own piece table,
//   so mapping tokens to offsets costs a table lookup per token instead of a second tokenizer
//   pass; chunking runs faster than a bare `encode` of the text.
// - Chunks are cut only where o200k's pre-tokenizer splits anyway (its regex never lets a piece
//   run across these points). Encoding a slice cut there yields exactly the document's tokens
//   for that range, so a chunk's token count is a subtraction, and it is the count a user gets by
//   encoding `chunk.text` on its own. The cut points ("boundaries") are:
//     - after the last line break of a whitespace run (unless a '/' follows: o200k glues "\n/"
//       onto preceding punctuation);
//     - before the last whitespace character of a run that is followed by a non-space (the space
//       belongs to the next word's token: "end. Next" is cut as "end." | " Next");
//     - between a letter and a following punctuation mark or symbol other than an apostrophe
//       (o200k keeps "don't" whole), which is what gives CJK text and long identifiers cut points.
// - Each chunk's end is the latest boundary of the best kind within the last 30% of its token
//   window: a markdown heading (when `markdown`), then a paragraph break (blank line), then the
//   start of a Markdown table row (a line starting with "|": every format writes its tables so,
//   and a row cut in two loses what its cells mean), then a sentence end or line end, then a word
//   boundary, then a letter/punctuation boundary. Only
//   when the window holds none is the chunk cut at the last token boundary that is also a
//   character boundary; such a slice is re-encoded to count it, and shortened if it came out
//   over chunkSize tokens (a cut inside a pre-token can change its BPE merges).
// - Overlap rule (snapped, not exact): the next chunk starts at the first boundary at or after
//   the token `chunkOverlap` tokens before the previous chunk's end. The shared text is
//   therefore at most `chunkOverlap` tokens and never starts mid-word. The next chunk starts
//   where the previous one ended when no boundary lies in that range (one giant "word"), or when
//   the previous chunk was cut inside such a word and no end past it would fit from the snapped
//   start.
// - Every chunk ends after the previous one and starts after the previous one's start, so the
//   chunks cover the text in order without gaps. The first starts at 0; the last ends at the end
//   of the text, or before trailing whitespace that a chunk of its own would hold alone.
// - Special-token strings such as `<|endoftext|>` are ordinary text here: documents are data,
//   never control sequences.
// - Offsets are UTF-16 code units (JS string indexes); a cut never falls inside a surrogate pair.
import type { ChunkRow } from '../../domain/types.js';
import { type ChunkOptions, type ChunkPlan, checkChunkOptions } from './options.js';
import { pageRange, planSpans } from './planner.js';
import { encodeInRuns, mapTokenOffsets } from './token-map.js';

export function chunkText(text: string, opts: ChunkOptions): ChunkPlan {
  checkChunkOptions(opts);
  const { chunkSize, chunkOverlap } = opts;

  const { tokens, forced } = encodeInRuns(text);
  if (!/\S/.test(text)) return { chunks: [], tokenCount: tokens.length };

  const map = mapTokenOffsets(tokens, text.length, forced);
  const spans = planSpans({ text, map, chunkSize, chunkOverlap, markdown: opts.markdown === true });
  const pages = opts.pages ?? null;
  const chunks: ChunkRow[] = spans.map((span, index) => {
    const range = pages ? pageRange(pages, span.charStart, span.charEnd) : null;
    return {
      index,
      text: text.slice(span.charStart, span.charEnd),
      tokenCount: span.tokenCount,
      charStart: span.charStart,
      charEnd: span.charEnd,
      pageStart: range ? range[0] : null,
      pageEnd: range ? range[1] : null,
    };
  });
  return { chunks, tokenCount: tokens.length };
}
