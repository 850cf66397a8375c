// .epub: e-books. Its first entry, "mimetype", names the format; the chapters are read in spine
// order by the HTML walk (extract.ts) after the archive limits every ZIP-based format is held to.
import type { FormatHandler } from '../handler.js';
import { zipKindOf } from '../shared/zip-kind.js';
import { packageProblem } from '../shared/zip-validate.js';

export const epubFormat: FormatHandler = {
  kind: 'binary',
  unpacks: true,
  sniff: ({ head }) => zipKindOf(head) === 'epub',
  validate: (probe) =>
    packageProblem(probe, {
      required: ['mimetype', 'meta-inf/container.xml'],
      aKind: 'an EPUB book',
      legacy: 'it is a legacy Office (OLE) file, not an EPUB book',
    }),
  loadExtractor: async () => {
    const { extractEpubText } = await import('./extract.js');
    return { paged: false, extractText: extractEpubText };
  },
};
