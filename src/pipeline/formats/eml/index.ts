// .eml: e-mail messages (RFC 5322, MIME). Text like txt as far as detection goes, but a file
// without a name that opens with mail headers is taken for one; mailparser reads it (extract.ts).
import type { FormatHandler } from '../handler.js';
import { textProblem } from '../text/validate.js';

/** The first line of a message as it is saved: a header every mail tool writes at the top. */
const FIRST_HEADER =
  /^(?:\ufeff)?(?:return-path|received|from|to|subject|date|message-id|mime-version|delivered-to|x-[a-z0-9-]+|dkim-signature|authentication-results):[ \t]/i;

export const emlFormat: FormatHandler = {
  kind: 'text',
  unpacks: true,
  sniff: ({ head }) =>
    FIRST_HEADER.test(head.subarray(0, 256).toString('latin1')) && /\n\r?\n/.test(head.toString('latin1')),
  validate: async ({ head, truncated }) => textProblem(head, truncated, false),
  loadExtractor: async (nested) => {
    const { extractEmlText } = await import('./extract.js');
    return { paged: false, extractText: (path: string) => extractEmlText(path, nested) };
  },
};
