// The three picture formats this folder reads, by the signature their first bytes carry. Its own
// module so that the handler (index.ts) and the OCR reader it loads on demand (extract.ts) share
// it without importing each other.
export type ImageKind = 'PNG' | 'JPEG' | 'TIFF';
