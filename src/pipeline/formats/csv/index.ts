// .csv/.tsv: delimited tables, as a Markdown table (extract.ts). Text like txt: only a name or a
// declared media type says a file is one, and only binary content is refused.
import type { FormatHandler } from '../handler.js';
import { textProblem } from '../text/validate.js';

export const csvFormat: FormatHandler = {
  kind: 'text',
  validate: async ({ head, truncated }) => textProblem(head, truncated, false),
  loadExtractor: async () => {
    const { csvTextPieces, extractCsvText } = await import('./extract.js');
    return { paged: false, extractText: extractCsvText, textPieces: csvTextPieces };
  },
};
