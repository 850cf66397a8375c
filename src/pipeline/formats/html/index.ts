// .html/.htm: web pages. Detection refuses only binary content, since a page may be in a legacy
// charset its <meta> names; extraction keeps the readable main text (extract.ts).
import { readFile } from 'node:fs/promises';
import type { FormatHandler } from '../handler.js';
import { looksLikeHtml } from '../sniff.js';
import { textProblem } from '../text/validate.js';

export const htmlFormat: FormatHandler = {
  kind: 'text',
  sniff: ({ head }) => looksLikeHtml(head),
  validate: async ({ head, truncated }) => textProblem(head, truncated, false),
  loadExtractor: async () => {
    const { extractHtmlText } = await import('./extract.js');
    return { paged: false, extractText: async (path) => extractHtmlText(await readFile(path)) };
  },
};
