// .rtf: Rich Text Format. Its "{\rtf" signature tells it from text; rtf-to-text strips the
// control words (extract.ts).

import { describe } from '../describe.js';
import type { FormatHandler } from '../handler.js';
import { startsWith } from '../sniff.js';

/** "{\rtf", after which the version number follows. */
export const RTF_SIGNATURE = [0x7b, 0x5c, 0x72, 0x74, 0x66];

export const rtfFormat: FormatHandler = {
  kind: 'binary',
  sniff: ({ head }) => startsWith(head, RTF_SIGNATURE),
  validate: async ({ head }) => (startsWith(head, RTF_SIGNATURE) ? null : describe(head)),
  loadExtractor: async () => {
    const { extractRtfText } = await import('./extract.js');
    return { paged: false, extractText: extractRtfText };
  },
};
