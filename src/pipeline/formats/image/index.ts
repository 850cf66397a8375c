// .png, .jpg/.jpeg, .tiff: pictures of text (scans, photos, screenshots), read by OCR. One folder
// for the three because nothing about them differs but the signature: the same decoder
// (Leptonica, inside the Tesseract wasm) reads all of them, and the same caps apply. Each is still
// its own format in the registry, so a document records its real media type.
import { describe } from '../describe.js';
import type { FormatHandler } from '../handler.js';
import { signatureOf } from '../sniff.js';

export type ImageKind = 'PNG' | 'JPEG' | 'TIFF';

export function imageFormat(kind: ImageKind): FormatHandler {
  return {
    kind: 'binary',
    sniff: ({ head }) => signatureOf(head) === kind,
    validate: async ({ head }) => (signatureOf(head) === kind ? null : describe(head)),
    loadExtractor: async () => {
      const { extractImageText } = await import('./extract.js');
      return { paged: false, ocr: true, extractText: (path: string) => extractImageText(path, kind) };
    },
  };
}
