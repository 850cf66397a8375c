// .png, .jpg/.jpeg, .tiff: pictures of text (scans, photos, screenshots), read by OCR. One folder
// for the three because little about them differs but the signature: PNG and JPEG are decoded by
// Leptonica inside the Tesseract wasm (extract.ts), and the same caps apply to all. A TIFF may hold
// many pages, so it is a paged format, decoded page by page in JavaScript (tiff.ts). Each is its
// own format in the registry, so a document records its real media type.
import { describe } from '../describe.js';
import type { FormatHandler } from '../handler.js';
import { signatureOf } from '../sniff.js';
import type { ImageKind } from './kind.js';

export function imageFormat(kind: ImageKind): FormatHandler {
  return {
    kind: 'binary',
    sniff: ({ head }) => signatureOf(head) === kind,
    validate: async ({ head }) => (signatureOf(head) === kind ? null : describe(head)),
    loadExtractor: async () => {
      if (kind === 'TIFF') {
        const { openTiff } = await import('./tiff.js');
        return { paged: true, openPaged: openTiff };
      }
      const { extractImageText } = await import('./extract.js');
      return { paged: false, ocr: true, extractText: (path: string) => extractImageText(path, kind) };
    },
  };
}
