// Word documents: first our own pass over the ZIP container, which enforces the archive limits
// (README, failure codes) by inflating every entry and counting the bytes that really come out (headers can
// claim anything), then mammoth for the text. mammoth (through JSZip) would inflate the whole
// archive into memory before we could object, so it only ever sees archives that passed.
import { open, readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import mammoth from 'mammoth';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { ExtractionError } from '../../extract/errors.js';
import { isEncryptedOoxml, isOleFile } from '../shared/office.js';
import { nextEntry } from '../shared/zip.js';
import { normalizeText } from '../text/decode.js';
import { type ArchiveLimits, DOCX_LIMITS } from './limits.js';

const MB = 1024 * 1024;

/**
 * Rejects, without inflating further than the first limit crossed: too many entries, duplicate
 * names, an entry inflating beyond the ratio, too many bytes in total (→ archive_limits); a
 * damaged archive, a part with a DTD, a missing word/document.xml, a legacy .doc (→ corrupt);
 * a password-protected document or encrypted entries (→ encrypted).
 */
export async function checkDocxArchive(filePath: string, limits: ArchiveLimits = DOCX_LIMITS): Promise<void> {
  await refuseOleFile(filePath);
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(filePath, {
      lazyEntries: true,
      autoClose: false,
      // Sizes are checked against what inflates, below; yauzl's own check would only compare
      // against the (attacker-chosen) header.
      validateEntrySizes: false,
      decodeStrings: true,
    });
  } catch (error) {
    throw new ExtractionError('corrupt', `the DOCX is not a valid ZIP archive (${messageOf(error)})`);
  }
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new ExtractionError(
        'archive_limits',
        `the DOCX archive has ${zip.entryCount} entries; at most ${limits.maxEntries} are allowed`,
      );
    }
    const names = new Set<string>();
    let total = 0;
    for (let entry = await nextEntry(zip); entry !== null; entry = await nextEntry(zip)) {
      // Part names compare case-insensitively in OPC (ECMA-376 Part 2, §9.1.1.1): two entries
      // differing only in case are the same part, and which one a reader takes is anyone's guess.
      const key = entry.fileName.replace(/\\/g, '/').toLowerCase();
      if (names.has(key)) {
        throw new ExtractionError('archive_limits', `the DOCX archive contains "${entry.fileName}" twice`);
      }
      names.add(key);
      if (entry.fileName.endsWith('/')) continue;
      if (entry.isEncrypted()) throw new ExtractionError('encrypted', 'the DOCX archive is encrypted');
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        throw new ExtractionError(
          'corrupt',
          `the DOCX archive entry "${entry.fileName}" uses compression method ${entry.compressionMethod}, which Word documents do not`,
        );
      }
      total += await inflateEntry(zip, entry, limits, total);
    }
    if (!names.has('[content_types].xml') || !names.has('word/document.xml')) {
      throw new ExtractionError(
        'corrupt',
        'the file is a ZIP archive but not a Word document (word/document.xml is missing)',
      );
    }
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    throw new ExtractionError('corrupt', `the DOCX archive is damaged (${messageOf(error)})`);
  } finally {
    zip.close();
  }
}

/** An encrypted .docx or a .doc under a .docx name: say which, instead of "not a ZIP archive". */
async function refuseOleFile(filePath: string): Promise<void> {
  const handle = await open(filePath, 'r');
  const head = Buffer.alloc(8);
  try {
    await handle.read(head, 0, 8, 0);
  } finally {
    await handle.close();
  }
  if (!isOleFile(head)) return;
  if (await isEncryptedOoxml(filePath))
    throw new ExtractionError('encrypted', 'the DOCX is password-protected');
  throw new ExtractionError('corrupt', 'the file is a legacy Office document (.doc), not a DOCX');
}

/** Body text with a blank line between paragraphs (tables give a paragraph per cell). */
export async function extractDocxText(filePath: string): Promise<string> {
  await checkDocxArchive(filePath);
  const buffer = await readFile(filePath);
  let value: string;
  try {
    ({ value } = await mammoth.extractRawText({ buffer }));
  } catch (error) {
    throw new ExtractionError('corrupt', `the DOCX cannot be read (${messageOf(error)})`);
  }
  return normalizeText(value)
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Inflates one entry to nowhere, counting compressed bytes read and bytes produced, and stops the
 * moment a limit is crossed. Returns the inflated size.
 */
async function inflateEntry(
  zip: ZipFile,
  entry: Entry,
  limits: ArchiveLimits,
  totalBefore: number,
): Promise<number> {
  const raw = await zip.openReadStreamPromise(entry, { decodeFileData: false });
  const inflater = entry.compressionMethod === 8 ? createInflateRaw() : null;
  const output: Readable = inflater ?? raw;
  const dtd = mayHoldDtd(entry.fileName) ? new DoctypeScanner() : null;
  let consumed = 0;
  let produced = 0;
  return new Promise<number>((resolve, reject) => {
    let settled = false;
    const stop = (error: ExtractionError | null) => {
      if (settled) return;
      settled = true;
      raw.destroy();
      inflater?.destroy();
      if (error) reject(error);
      else resolve(produced);
    };
    raw.on('data', (chunk: Buffer) => {
      consumed += chunk.length;
    });
    output.on('data', (chunk: Buffer) => {
      if (settled) return;
      produced += chunk.length;
      if (totalBefore + produced > limits.maxTotalBytes) {
        stop(
          new ExtractionError(
            'archive_limits',
            `the DOCX inflates to more than ${limits.maxTotalBytes / MB} MB; at most ${limits.maxTotalBytes / MB} MB are allowed`,
          ),
        );
      } else if (
        produced > limits.ratioGraceBytes &&
        produced > limits.maxEntryRatio * Math.max(consumed, 1)
      ) {
        // `consumed` runs ahead of what the inflater has digested, so this ratio errs low:
        // a legitimate entry is never cut off early, and a bomb is stopped within a chunk or two.
        stop(
          new ExtractionError(
            'archive_limits',
            `the DOCX archive entry "${entry.fileName}" inflates more than ${limits.maxEntryRatio}× (a ZIP bomb?)`,
          ),
        );
      } else if (dtd?.push(chunk)) {
        stop(
          new ExtractionError(
            'corrupt',
            `the DOCX part "${entry.fileName}" declares a DTD, which Word documents never do (entity expansion attack?)`,
          ),
        );
      }
    });
    output.on('end', () => stop(null));
    const onError = (error: Error) =>
      stop(
        new ExtractionError(
          'corrupt',
          `the DOCX archive entry "${entry.fileName}" is damaged (${error.message})`,
        ),
      );
    output.on('error', onError);
    if (inflater) {
      raw.on('error', onError);
      raw.pipe(inflater);
    }
  });
}

/** The parts mammoth parses as XML. */
function mayHoldDtd(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    lower === '[content_types].xml' ||
    lower.endsWith('.rels') ||
    (lower.startsWith('word/') && lower.endsWith('.xml'))
  );
}

/**
 * Finds "<!DOCTYPE" (any case) in a byte stream delivered in chunks. OOXML forbids DTDs
 * (ECMA-376 Part 2, §8.1.4), and Word refuses files with one; refusing them here keeps entity
 * expansion (XXE, billion laughs) away from the XML parser, which does not expand them today
 * but need not stay that way.
 */
class DoctypeScanner {
  private static readonly needle = 'doctype';
  private tail: Buffer = Buffer.alloc(0);

  /** True once the declaration has been seen. */
  push(chunk: Buffer): boolean {
    const window = this.tail.length > 0 ? Buffer.concat([this.tail, chunk]) : chunk;
    for (let at = window.indexOf('<!'); at !== -1; at = window.indexOf('<!', at + 2)) {
      const word = window
        .subarray(at + 2, at + 2 + DoctypeScanner.needle.length)
        .toString('latin1')
        .toLowerCase();
      if (word === DoctypeScanner.needle) return true;
    }
    // Enough of the end to hold a declaration split across two chunks.
    this.tail = Buffer.from(window.subarray(Math.max(0, window.length - (DoctypeScanner.needle.length + 1))));
    return false;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
