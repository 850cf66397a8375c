// .odt: OpenDocument text (LibreOffice, Google Docs exports). Its first entry, "mimetype", names
// the format; the text is read from content.xml by our SAX reader (extract.ts) after the archive
// limits every ZIP-based format is held to.
import type { FormatHandler } from '../handler.js';
import { zipKindOf } from '../shared/zip-kind.js';
import { packageProblem } from '../shared/zip-validate.js';

export const odtFormat: FormatHandler = {
  kind: 'binary',
  unpacks: true,
  sniff: ({ head }) => zipKindOf(head) === 'odt',
  validate: (probe) =>
    packageProblem(probe, {
      required: ['mimetype', 'content.xml'],
      aKind: 'an OpenDocument text',
      legacy: 'it is a legacy Office (OLE) file, not an OpenDocument text',
    }),
  loadExtractor: async () => {
    const { extractOdtText } = await import('./extract.js');
    return { paged: false, extractText: extractOdtText };
  },
};
