// Decides which extractor a stored file goes to, from its bytes: a file's name and a server's
// Content-Type only choose between formats the bytes allow, because a client can claim anything.
// Refusals carry a sentence a user can act on ("report.pdf is not a PDF (starts with PNG
// signature)"); they become 415 at upload and `failed: unsupported_format` after a download.
import { open } from 'node:fs/promises';
import path from 'node:path';
import yauzl, { type ZipFile } from 'yauzl';
import { isEncryptedOoxml, isOleFile } from './office.js';
import { bomOf } from './text.js';
import type { SourceFormat } from './types.js';
import { nextEntry } from './zip.js';

export type DetectResult = { ok: true; format: SourceFormat } | { ok: false; detail: string };

export interface DetectInput {
  path: string;
  /** Upload filename, or the last segment of a downloaded URL's path; null when there is none. */
  filename: string | null;
  /** Content-Type a server sent with a download. Never from an upload: clients label files wrongly. */
  declaredContentType?: string | null;
}

/** Enough to judge text by (well over the 8 KiB the signatures need), small enough to read per upload. */
const HEAD_BYTES = 64 * 1024;

/**
 * PDF 32000-1 puts the header at byte 0, but Acrobat and pdf.js look for it in the first 1024
 * bytes, and files with a little junk in front (a stray HTTP header or BOM from a broken
 * download) open everywhere else; refusing them would only puzzle users.
 */
const PDF_HEADER_WINDOW = 1024;

/** Past this many entries the archive is no Word document we would accept anyway. */
const MAX_ZIP_ENTRIES_SCANNED = 100_000;

// Maps, not object literals: a file named "x.constructor" must not find Object.prototype.
const EXTENSIONS: ReadonlyMap<string, SourceFormat> = new Map([
  ['pdf', 'pdf'],
  ['docx', 'docx'],
  ['txt', 'txt'],
  ['text', 'txt'],
  ['md', 'md'],
  ['markdown', 'md'],
  ['html', 'html'],
  ['htm', 'html'],
]);

const MEDIA_TYPES: ReadonlyMap<string, SourceFormat> = new Map([
  ['application/pdf', 'pdf'],
  ['application/x-pdf', 'pdf'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
  ['text/plain', 'txt'],
  ['text/markdown', 'md'],
  ['text/x-markdown', 'md'],
  ['text/html', 'html'],
  ['application/xhtml+xml', 'html'],
]);

const NAMES: Readonly<Record<SourceFormat, string>> = {
  pdf: 'a PDF',
  docx: 'a DOCX',
  txt: 'text',
  md: 'Markdown text',
  html: 'an HTML page',
};

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

export async function detectFormat(input: DetectInput): Promise<DetectResult> {
  const label = input.filename ?? 'file';
  let head: Buffer;
  let size: number;
  try {
    const handle = await open(input.path, 'r');
    try {
      size = (await handle.stat()).size;
      head = Buffer.alloc(Math.min(size, HEAD_BYTES));
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      head = head.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    // Our own storage failing is not the user's file being wrong.
    throw new Error(
      `cannot read the stored file (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (size === 0 || head.length === 0) return refuse(`${label} is empty`);
  const truncated = head.length < size;

  const extension = input.filename ? path.extname(input.filename).slice(1).toLowerCase() : '';
  const fromName = EXTENSIONS.get(extension);
  const declared = mediaTypeOf(input.declaredContentType);
  const fromType = declared ? MEDIA_TYPES.get(declared) : undefined;

  if (fromName) return verify(fromName, head, truncated, input.path, label);
  if (extension !== '' && !input.declaredContentType) {
    return refuse(
      `${label} has an unsupported file type (.${extension}${signatureSuffix(head)}); supported: .pdf, .docx, .txt, .md, .html`,
    );
  }

  // No usable extension (a URL like /download?id=3, a file named README): the bytes decide,
  // and a declared text type picks between the text formats the bytes cannot tell apart.
  const pdfAt = pdfHeaderAt(head);
  const saysText = fromType === 'html' || fromType === 'md' || fromType === 'txt';
  // Junk before %PDF- is believed only when nothing says the file is text: a web page about PDF
  // may well quote a header in its first kilobyte.
  if (pdfAt === 0 || (pdfAt > 0 && !saysText && !looksLikeHtml(head))) {
    return verify('pdf', head, truncated, input.path, label);
  }
  if (signatureOf(head) === 'ZIP') return verify('docx', head, truncated, input.path, label);
  // A server that promised a PDF and sent a login page did not send the document.
  if (fromType === 'pdf' || fromType === 'docx') return verify(fromType, head, truncated, input.path, label);
  const signature = signatureOf(head);
  if (signature) return refuse(`${label} is not a supported format (starts with ${signature} signature)`);
  if (saysText) return verify(fromType, head, truncated, input.path, label);
  return verify(looksLikeHtml(head) ? 'html' : 'txt', head, truncated, input.path, label);
}

async function verify(
  format: SourceFormat,
  head: Buffer,
  truncated: boolean,
  filePath: string,
  label: string,
): Promise<DetectResult> {
  const notA = (reason: string) => refuse(`${label} is not ${NAMES[format]} (${reason})`);
  switch (format) {
    case 'pdf': {
      const at = pdfHeaderAt(head);
      if (at === -1) return notA(describe(head));
      // Junk in front of the header is tolerated, another format's signature or a page is not.
      if (at > 0 && (signatureOf(head) || looksLikeHtml(head))) return notA(describe(head));
      return { ok: true, format };
    }
    case 'docx': {
      if (isOleFile(head)) {
        return notA(
          (await isEncryptedOoxml(filePath))
            ? 'it is password-protected; remove the password in Word and upload it again'
            : 'it is a legacy Word .doc file; save it as .docx',
        );
      }
      if (!startsWith(head, [0x50, 0x4b, 0x03, 0x04])) return notA(describe(head));
      const missing = await missingDocxParts(filePath);
      if (missing === null) return { ok: true, format };
      return notA(missing);
    }
    case 'txt':
    case 'md': {
      const problem = textProblem(head, truncated, true);
      return problem ? notA(problem) : { ok: true, format };
    }
    case 'html': {
      // Pages may be in a legacy charset their <meta> names, so only binary content is refused.
      const problem = textProblem(head, truncated, false);
      return problem ? notA(problem) : { ok: true, format };
    }
  }
}

/**
 * Null when the archive holds both parts every Word document has, else why not. Only the central
 * directory is read; nothing is inflated here (the extractor does that under its limits).
 */
async function missingDocxParts(filePath: string): Promise<string | null> {
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(filePath, { lazyEntries: true, autoClose: false, decodeStrings: true });
  } catch (error) {
    return `a damaged ZIP archive: ${error instanceof Error ? error.message : String(error)}`;
  }
  try {
    let contentTypes = false;
    let document = false;
    for (let seen = 0; seen < MAX_ZIP_ENTRIES_SCANNED; seen++) {
      const entry = await nextEntry(zip);
      if (entry === null) break;
      // OPC part names compare case-insensitively.
      const name = entry.fileName.toLowerCase();
      if (name === '[content_types].xml') contentTypes = true;
      if (name === 'word/document.xml') document = true;
      if (contentTypes && document) return null;
    }
    if (!contentTypes) return 'a ZIP archive without [Content_Types].xml, so not an Office document';
    return 'a ZIP archive without word/document.xml, so not a Word document';
  } catch (error) {
    return `a damaged ZIP archive: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    zip.close();
  }
}

/**
 * Why the head is not usable text, or null. UTF-16 needs its BOM; anything else must be UTF-8
 * (when `requireUtf8`) and free of the control characters that only binary files are full of.
 * Later damage is repaired at extraction (U+FFFD); a file that starts wrong is refused outright.
 */
function textProblem(head: Buffer, truncated: boolean, requireUtf8: boolean): string | null {
  const signature = signatureOf(head);
  if (signature) return `starts with ${signature} signature`;
  const bom = bomOf(head);
  let text: string;
  if (bom?.encoding === 'utf-16le' || bom?.encoding === 'utf-16be') {
    // An odd length when truncated is just a cut in the middle of a code unit.
    text = new TextDecoder(bom.encoding).decode(truncated ? head.subarray(0, head.length & ~1) : head);
  } else {
    const invalidAt = firstInvalidUtf8(head, truncated);
    if (invalidAt !== -1 && requireUtf8) {
      return `not UTF-8: invalid byte 0x${head[invalidAt]!.toString(16).padStart(2, '0')} at offset ${invalidAt}; save it as UTF-8`;
    }
    text = head.toString('latin1');
  }
  let control = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // Tab, line feed, vertical tab, form feed, carriage return and escape occur in real text.
    if (code < 0x20 && (code < 0x09 || code > 0x0d) && code !== 0x1b) control++;
  }
  // A stray NUL or two is text with a defect (extraction drops them); more is a binary file.
  if (control > Math.max(2, text.length / 100)) return 'it contains binary data';
  return null;
}

/** Offset of the first byte that breaks UTF-8, or -1. A sequence cut off by the head's end is fine. */
export function firstInvalidUtf8(bytes: Uint8Array, truncated: boolean): number {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else {
      return i;
    }
    let code = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const next = bytes[i + k];
      if (next === undefined) return truncated ? -1 : i;
      if ((next & 0xc0) !== 0x80) return i;
      code = (code << 6) | (next & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if (code < min || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return i;
    i += need + 1;
  }
  return -1;
}

function pdfHeaderAt(head: Buffer): number {
  const at = head.subarray(0, PDF_HEADER_WINDOW + 5).indexOf('%PDF-');
  return at <= PDF_HEADER_WINDOW ? at : -1;
}

function signatureOf(head: Buffer): string | null {
  for (const { bytes, name } of SIGNATURES) {
    if (startsWith(head, bytes)) return name;
  }
  return null;
}

function signatureSuffix(head: Buffer): string {
  const signature = signatureOf(head);
  return signature ? `, starts with ${signature} signature` : '';
}

/** What the bytes look like, for a refusal. */
function describe(head: Buffer): string {
  const signature = signatureOf(head);
  if (signature) return `starts with ${signature} signature`;
  if (looksLikeHtml(head)) return 'it is an HTML page';
  if (textProblem(head, true, true) === null) return 'it is plain text';
  const first = [...head.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  return `starts with bytes ${first}`;
}

/** The tags the WHATWG MIME sniffing algorithm takes as HTML, after optional BOM and spaces. */
function looksLikeHtml(head: Buffer): boolean {
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

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  return prefix.every((b, i) => bytes[i] === b);
}

function mediaTypeOf(contentType: string | null | undefined): string | null {
  if (!contentType) return null;
  return contentType.split(';')[0]!.trim().toLowerCase() || null;
}

function refuse(detail: string): DetectResult {
  return { ok: false, detail };
}
