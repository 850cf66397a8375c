// Byte sniffing every format's detection shares: the signatures of formats people upload by
// mistake (so a refusal can say what the file is), and the WHATWG test for an HTML page.

/** Signatures of formats people upload by mistake, so the refusal can say what the file is. */
const SIGNATURES: readonly { bytes: number[]; name: string }[] = [
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], name: 'PDF' },
  { bytes: [0x50, 0x4b, 0x03, 0x04], name: 'ZIP' },
  { bytes: [0x50, 0x4b, 0x05, 0x06], name: 'ZIP' },
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], name: 'PNG' },
  { bytes: [0xff, 0xd8, 0xff], name: 'JPEG' },
  { bytes: [0x47, 0x49, 0x46, 0x38, 0x37, 0x61], name: 'GIF' },
  { bytes: [0x47, 0x49, 0x46, 0x38, 0x39, 0x61], name: 'GIF' },
  { bytes: [0x52, 0x49, 0x46, 0x46], name: 'RIFF (WebP, WAV or AVI)' },
  { bytes: [0x49, 0x49, 0x2a, 0x00], name: 'TIFF' },
  { bytes: [0x4d, 0x4d, 0x00, 0x2a], name: 'TIFF' },
  // The OLE container: legacy .doc/.xls/.ppt, and also a password-protected .docx.
  { bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], name: 'legacy Office (OLE)' },
  { bytes: [0x7b, 0x5c, 0x72, 0x74, 0x66], name: 'RTF' },
  { bytes: [0x1f, 0x8b], name: 'gzip' },
  { bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07], name: 'RAR' },
  { bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], name: '7-Zip' },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], name: 'ELF executable' },
];

export function signatureOf(head: Buffer): string | null {
  for (const { bytes, name } of SIGNATURES) {
    if (startsWith(head, bytes)) return name;
  }
  return null;
}

/** The tags the WHATWG MIME sniffing algorithm takes as HTML, after optional BOM and spaces. */
export function looksLikeHtml(head: Buffer): boolean {
  const start = head
    .subarray(0, 1024)
    .toString('latin1')
    .replace(/^\u00ef\u00bb\u00bf/, '')
    .trimStart()
    .toLowerCase();
  return /^<(!doctype html|html|head|body|title|script|style|iframe|h1|div|font|table|a|b|p|br|!--)[\s>]/.test(
    start,
  );
}

export function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  return prefix.every((b, i) => bytes[i] === b);
}
