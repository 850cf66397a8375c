// .pdf: found by its %PDF- header, extracted page by page with pdf.js (extract.ts), possibly by
// several threads at once. pdf.js itself loads with the first PDF a thread sees, not before.
import { describe } from '../describe.js';
import type { FormatHandler } from '../handler.js';
import { looksLikeHtml, signatureOf } from '../sniff.js';

/**
 * PDF 32000-1 puts the header at byte 0, but Acrobat and pdf.js look for it in the first 1024
 * bytes, and files with a little junk in front (a stray HTTP header or BOM from a broken
 * download) open everywhere else; refusing them would only puzzle users.
 */
const PDF_HEADER_WINDOW = 1024;

export const pdfFormat: FormatHandler = {
  kind: 'binary',
  sniff: ({ head }, { declaredText }) => {
    const at = pdfHeaderAt(head);
    // Junk before %PDF- is believed only when nothing says the file is text: a web page about PDF
    // may well quote a header in its first kilobyte.
    return at === 0 || (at > 0 && !declaredText && !looksLikeHtml(head));
  },
  validate: async ({ head }) => {
    const at = pdfHeaderAt(head);
    if (at === -1) return describe(head);
    // Junk in front of the header is tolerated, another format's signature or a page is not.
    if (at > 0 && (signatureOf(head) || looksLikeHtml(head))) return describe(head);
    return null;
  },
  loadExtractor: async () => {
    const { openPagedPdf } = await import('./extract.js');
    return { paged: true, openPaged: openPagedPdf };
  },
};

function pdfHeaderAt(head: Buffer): number {
  const at = head.subarray(0, PDF_HEADER_WINDOW + 5).indexOf('%PDF-');
  return at <= PDF_HEADER_WINDOW ? at : -1;
}
