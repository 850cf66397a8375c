// .docx: Word documents (Office Open XML). Without a usable name, a ZIP is taken for one unless
// its first entries show another ZIP-based format (shared/zip-kind.ts), and then checked; the text
// comes from mammoth, after the archive limits (extract.ts, limits.ts).
import type { FormatHandler } from '../handler.js';
import { zipKindOf } from '../shared/zip-kind.js';
import { signatureOf } from '../sniff.js';
import { docxProblem } from './validate.js';

export const docxFormat: FormatHandler = {
  kind: 'binary',
  unpacks: true,
  sniff: ({ head }) => signatureOf(head) === 'ZIP' && (zipKindOf(head) ?? 'docx') === 'docx',
  validate: docxProblem,
  loadExtractor: async () => {
    const { extractDocxText } = await import('./extract.js');
    return { paged: false, extractText: extractDocxText };
  },
};
