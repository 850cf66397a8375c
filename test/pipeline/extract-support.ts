// Shared by the extract*.test.ts suites: where the corpus lives, hand-built ZIP archives (so the
// hostile ones can say whatever their headers like), minimal Word documents, temp files, and a
// loopback "canary" that notices any connection an extractor should never make.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, deflateRawSync } from 'node:zlib';
import { CORPUS_DIR } from '../helpers/shared-dir.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '../..');
// The shared corpus (absent beside a clone on its own: see test/helpers/shared.ts).
export const CORPUS = CORPUS_DIR;
export const PDF_DIR = path.join(CORPUS, 'pdf');
export const DOCX_DIR = path.join(CORPUS, 'docx');
export const FIXTURES = path.join(ROOT, 'test/fixtures/extract');

import type { ZipEntrySpec } from '../helpers/zip.js';

export { makeZip, type WorkbookSpec, workbookEntries, type ZipEntrySpec } from '../helpers/zip.js';

/**
 * A raw deflate stream of `copies` × `chunkBytes` zero bytes, made without ever holding the
 * inflated data: one sync-flushed (non-final) deflate of the chunk, repeated, then an empty final
 * block. 1 MiB of zeros deflates to about 1 KiB, so 1,024 copies ≈ 1 MiB → 1 GiB.
 */
export function deflatedZeros(copies: number, chunkBytes = 1024 * 1024): Buffer {
  const piece = deflateRawSync(Buffer.alloc(chunkBytes), { finishFlush: constants.Z_SYNC_FLUSH });
  const last = deflateRawSync(Buffer.alloc(0));
  return Buffer.concat([...Array.from({ length: copies }, () => piece), last]);
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';

export const CONTENT_TYPES_XML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;

export const PACKAGE_RELS_XML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

/** word/document.xml with one paragraph per string. */
export function documentXml(
  paragraphs: string[],
  prolog = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
): string {
  const body = paragraphs
    .map((text) => `<w:p><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`)
    .join('');
  return `${prolog}<w:document ${W} ${R}><w:body>${body}</w:body></w:document>`;
}

/** The three parts every Word document needs, plus any extra entries. */
export function docxEntries(document: string, extra: ZipEntrySpec[] = []): ZipEntrySpec[] {
  return [
    { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
    { name: '_rels/.rels', data: PACKAGE_RELS_XML },
    { name: 'word/document.xml', data: document },
    ...extra,
  ];
}

export interface TempDir {
  dir: string;
  write(name: string, data: Buffer | string): Promise<string>;
  remove(): Promise<void>;
}

export async function makeTempDir(prefix = 'docindex-extract-'): Promise<TempDir> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return {
    dir,
    async write(name, data) {
      const file = path.join(dir, name);
      await writeFile(file, data);
      return file;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A TCP listener on 127.0.0.1 that counts connections: any at all means something was fetched. */
export interface Canary {
  url: string;
  connections(): number;
  close(): Promise<void>;
}

export async function startCanary(): Promise<Canary> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('canary has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    connections: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Words as a reader would compare them: NFKC (ligatures, full-width forms), lower case, letters
 * and digits only, hyphenation at line ends undone first (pdftotext keeps "adip-\niscing").
 */
export function wordsOf(text: string): string[] {
  return text
    .normalize('NFKC')
    .replace(/(\p{L})[-\u2010\u00ad]\n(\p{Ll})/gu, '$1$2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/** Share of `reference`'s words (with multiplicity) that `candidate` also has. */
export function wordRecall(reference: string, candidate: string): number {
  const counts = new Map<string, number>();
  for (const word of wordsOf(candidate)) counts.set(word, (counts.get(word) ?? 0) + 1);
  const expected = wordsOf(reference);
  if (expected.length === 0) return 1;
  let found = 0;
  for (const word of expected) {
    const left = counts.get(word) ?? 0;
    if (left > 0) {
      found++;
      counts.set(word, left - 1);
    }
  }
  return found / expected.length;
}

/** Whitespace runs as one space, so assertions do not depend on where lines break. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ');
}

/** Asserts-friendly: the index of each needle, searching onwards from the previous one (-1 if out of order). */
export function positionsInOrder(text: string, needles: string[]): number[] {
  const flat = squash(text);
  const positions: number[] = [];
  let from = 0;
  for (const needle of needles) {
    const at = flat.indexOf(needle, from);
    positions.push(at);
    if (at !== -1) from = at + needle.length;
  }
  return positions;
}

/**
 * An OLE compound file as Word writes for a password-protected .docx (or, without
 * `encrypted`, a legacy .doc): the signature, and directory entries naming the streams in UTF-16.
 * Only as much structure as format detection looks at.
 */
export function oleFile(encrypted: boolean): Buffer {
  const header = Buffer.alloc(512);
  Buffer.from('d0cf11e0a1b11ae1', 'hex').copy(header);
  const names = encrypted
    ? ['Root Entry', 'EncryptionInfo', 'EncryptedPackage']
    : ['Root Entry', 'WordDocument', '1Table'];
  const directory = Buffer.concat(
    names.map((name) => {
      const entry = Buffer.alloc(128);
      Buffer.from(name, 'utf16le').copy(entry);
      return entry;
    }),
  );
  return Buffer.concat([header, Buffer.alloc(512 * 8), directory, Buffer.alloc(512)]);
}
