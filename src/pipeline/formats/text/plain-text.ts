// Plain text and Markdown share everything but their id: the same check (UTF-8 or a UTF-16 BOM,
// no binary content) and the same extraction (decode, normalise; Markdown stays as written,
// because its headings are what the chunker splits on).
import { readFile } from 'node:fs/promises';
import type { FormatHandler } from '../handler.js';
import { decodeText, decodeTextPieces } from './decode.js';
import { textProblem } from './validate.js';

export const plainTextFormat: FormatHandler = {
  kind: 'text',
  validate: async ({ head, truncated }) => textProblem(head, truncated, true),
  loadExtractor: async () => ({
    paged: false,
    extractText: async (path) => decodeText(await readFile(path)),
    textPieces: decodeTextPieces,
  }),
};
