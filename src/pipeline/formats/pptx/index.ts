// .pptx: PowerPoint presentations (Office Open XML). Paged: each slide is a page, so a chunk says
// which slides it came from. The text is read by our own SAX reader (extract.ts) after the archive
// limits every ZIP-based format is held to.
import type { FormatHandler } from '../handler.js';
import { zipKindOf } from '../shared/zip-kind.js';
import { packageProblem } from '../shared/zip-validate.js';

export const pptxFormat: FormatHandler = {
  kind: 'binary',
  unpacks: true,
  sniff: ({ head }) => zipKindOf(head) === 'pptx',
  validate: (probe) =>
    packageProblem(probe, {
      required: ['[content_types].xml', 'ppt/presentation.xml'],
      aKind: 'a PowerPoint presentation',
      legacy: 'it is a legacy PowerPoint .ppt file; save it as .pptx',
    }),
  loadExtractor: async () => {
    const { openPptx } = await import('./extract.js');
    return { paged: true, openPaged: openPptx };
  },
};
