// .docx: Word documents (Office Open XML). Without a usable name, any ZIP is taken for one and
// then checked; the text comes from mammoth, after the archive limits (extract.ts, limits.ts).
import type { FormatHandler } from '../handler.js';
import { signatureOf } from '../sniff.js';
import { docxProblem } from './validate.js';

export const docxFormat: FormatHandler = {
  kind: 'binary',
  sniff: ({ head }) => signatureOf(head) === 'ZIP',
  validate: docxProblem,
  loadExtractor: async () => {
    const { extractDocxText } = await import('./extract.js');
    return { paged: false, extractText: extractDocxText };
  },
};
