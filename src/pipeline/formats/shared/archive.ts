// The archive limits every ZIP-based format is held to (docs/API.md, "Why a document fails"), checked before any
// parser sees the archive: every entry is inflated to nowhere while the bytes that really come
// out are counted (headers can claim anything), and the XML parts are scanned for the DTD
// declarations entity-expansion attacks need. Parsers (mammoth, our own SAX readers) would inflate
// parts into memory before they could object, so they only ever see archives that passed. Then
// `readZipEntries` hands a reader the parts it needs whole, and `openZipParts` in pieces.
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { ExtractionError } from '../../extract/errors.js';
import { isEncryptedOoxml, isOleFile } from './office.js';
import { nextEntry } from './zip.js';

const MB = 1024 * 1024;

export interface ArchiveLimits {
  maxEntries: number;
  /** Inflated bytes per compressed byte, per entry. */
  maxEntryRatio: number;
  /**
   * Entries that inflate to less than this are not held to the ratio: no bomb fits in it, and
   * small, very repetitive XML parts legitimately compress beyond 100×. Apache POI's
   * ZipSecureFile uses the same 100 KiB grace for the same reason. The total cap still counts
   * every byte.
   */
  ratioGraceBytes: number;
  maxTotalBytes: number;
}

/** The limits of every ZIP-based format (docs/API.md, "Why a document fails"). */
export const ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 1_000,
  maxEntryRatio: 100,
  ratioGraceBytes: 100 * 1024,
  maxTotalBytes: 200 * 1024 * 1024,
};

/** What the check needs to know about one ZIP-based format. */
export interface ZipFormat {
  /** In messages: "the DOCX archive has …". */
  name: string;
  /** Files of the format, in the DTD refusal: "which Word documents never do". */
  plural: string;
  /** One of them, when the main part is missing: "not a Word document". */
  aKind: string;
  /** Lowercase names of the parts every file of the format has; the last one is named when missing. */
  required: readonly string[];
  /** The parts a reader parses as XML, and so must carry no entity declarations. */
  parsedXml(lowerName: string): boolean;
  /**
   * 'doctype': any DTD is refused (OOXML and ODF forbid them). 'entity': a DOCTYPE is allowed
   * (EPUB 2 chapters carry the XHTML one) but an entity declaration is not.
   */
  refuse: 'doctype' | 'entity';
  /** An OLE file under this format's name: an encrypted OOXML package, or a legacy binary file. */
  legacyName?: string;
}

/**
 * Rejects, without inflating further than the first limit crossed: too many entries, duplicate
 * names, an entry inflating beyond the ratio, too many bytes in total (→ archive_limits); a
 * damaged archive, a part with a DTD, a missing main part, a legacy binary file (→ corrupt);
 * a password-protected document or encrypted entries (→ encrypted).
 */
export async function checkArchive(
  filePath: string,
  format: ZipFormat,
  limits: ArchiveLimits = ARCHIVE_LIMITS,
): Promise<void> {
  await refuseOleFile(filePath, format);
  const { name } = format;
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
    throw new ExtractionError('corrupt', `the ${name} is not a valid ZIP archive (${messageOf(error)})`);
  }
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new ExtractionError(
        'archive_limits',
        `the ${name} archive has ${zip.entryCount} entries; at most ${limits.maxEntries} are allowed`,
      );
    }
    const names = new Set<string>();
    let total = 0;
    for (let entry = await nextEntry(zip); entry !== null; entry = await nextEntry(zip)) {
      // Part names compare case-insensitively in OPC (ECMA-376 Part 2, §9.1.1.1): two entries
      // differing only in case are the same part, and which one a reader takes is anyone's guess.
      const key = entry.fileName.replace(/\\/g, '/').toLowerCase();
      if (names.has(key)) {
        throw new ExtractionError('archive_limits', `the ${name} archive contains "${entry.fileName}" twice`);
      }
      names.add(key);
      if (entry.fileName.endsWith('/')) continue;
      if (entry.isEncrypted()) throw new ExtractionError('encrypted', `the ${name} archive is encrypted`);
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        throw new ExtractionError(
          'corrupt',
          `the ${name} archive entry "${entry.fileName}" uses compression method ${entry.compressionMethod}, which ${format.plural} do not`,
        );
      }
      total += await inflateEntry(zip, entry, format, limits, total);
    }
    const mainPart = format.required.at(-1)!;
    if (format.required.some((part) => !names.has(part))) {
      throw new ExtractionError(
        'corrupt',
        `the file is a ZIP archive but not ${format.aKind} (${mainPart} is missing)`,
      );
    }
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    throw new ExtractionError('corrupt', `the ${name} archive is damaged (${messageOf(error)})`);
  } finally {
    zip.close();
  }
}

/**
 * The entries `wanted` accepts (by lowercase name), inflated: only call on an archive that passed
 * `checkArchive`, whose limits bound what this can hold in memory.
 */
export async function readZipEntries(
  filePath: string,
  format: Pick<ZipFormat, 'name'>,
  wanted: (lowerName: string) => boolean,
): Promise<Map<string, Buffer>> {
  const zip = await openZipParts(filePath, format);
  try {
    const parts = new Map<string, Buffer>();
    for (const name of zip.names()) if (wanted(name)) parts.set(name, await zip.read(name));
    return parts;
  } finally {
    zip.close();
  }
}

/** The parts of an archive that passed `checkArchive`, by lowercase name, each read whole or in pieces. */
export interface ZipParts {
  /** Every part's lowercase name, in archive order (folders left out). */
  names(): string[];
  has(lowerName: string): boolean;
  /** The part inflated whole, for parts the archive limits bound; a missing part → corrupt. */
  read(lowerName: string): Promise<Buffer>;
  /** The part as it inflates, as often as wanted: for parts too large to hold whole. */
  pieces(lowerName: string): AsyncIterable<Buffer>;
  close(): void;
}

/** Opens an archive that passed `checkArchive`; a damaged entry met later → corrupt. */
export async function openZipParts(filePath: string, format: Pick<ZipFormat, 'name'>): Promise<ZipParts> {
  const damaged = (error: unknown) =>
    error instanceof ExtractionError
      ? error
      : new ExtractionError('corrupt', `the ${format.name} archive is damaged (${messageOf(error)})`);
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(filePath, { lazyEntries: true, autoClose: false, decodeStrings: true });
  } catch (error) {
    throw new ExtractionError(
      'corrupt',
      `the ${format.name} is not a valid ZIP archive (${messageOf(error)})`,
    );
  }
  const entries = new Map<string, Entry>();
  try {
    for (let entry = await nextEntry(zip); entry !== null; entry = await nextEntry(zip)) {
      const key = entry.fileName.replace(/\\/g, '/').toLowerCase();
      if (!key.endsWith('/')) entries.set(key, entry);
    }
  } catch (error) {
    zip.close();
    throw damaged(error);
  }
  const entryOf = (name: string): Entry => {
    const entry = entries.get(name);
    if (!entry) throw new ExtractionError('corrupt', `the ${format.name} has no ${name}`);
    return entry;
  };
  async function* pieces(name: string): AsyncGenerator<Buffer> {
    try {
      for await (const piece of await zip.openReadStreamPromise(entryOf(name))) yield piece as Buffer;
    } catch (error) {
      throw damaged(error);
    }
  }
  return {
    names: () => [...entries.keys()],
    has: (name) => entries.has(name),
    async read(name) {
      const all: Buffer[] = [];
      for await (const piece of pieces(name)) all.push(piece);
      return Buffer.concat(all);
    },
    pieces,
    close: () => zip.close(),
  };
}

/** An encrypted package or a legacy binary file under this format's name: say which. */
async function refuseOleFile(filePath: string, format: ZipFormat): Promise<void> {
  const handle = await open(filePath, 'r');
  const head = Buffer.alloc(8);
  try {
    await handle.read(head, 0, 8, 0);
  } finally {
    await handle.close();
  }
  if (!isOleFile(head)) return;
  if (await isEncryptedOoxml(filePath))
    throw new ExtractionError('encrypted', `the ${format.name} is password-protected`);
  throw new ExtractionError(
    'corrupt',
    format.legacyName
      ? `the file is a legacy Office document (${format.legacyName}), not a ${format.name}`
      : `the file is a legacy Office (OLE) file, not ${format.aKind}`,
  );
}

/**
 * Inflates one entry to nowhere, counting compressed bytes read and bytes produced, and stops the
 * moment a limit is crossed. Returns the inflated size.
 */
async function inflateEntry(
  zip: ZipFile,
  entry: Entry,
  format: ZipFormat,
  limits: ArchiveLimits,
  totalBefore: number,
): Promise<number> {
  const { name } = format;
  const raw = await zip.openReadStreamPromise(entry, { decodeFileData: false });
  const inflater = entry.compressionMethod === 8 ? createInflateRaw() : null;
  const output: Readable = inflater ?? raw;
  const lower = entry.fileName.replace(/\\/g, '/').toLowerCase();
  const scanner = format.parsedXml(lower) ? new DeclarationScanner(format.refuse) : null;
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
            `the ${name} inflates to more than ${limits.maxTotalBytes / MB} MB; at most ${limits.maxTotalBytes / MB} MB are allowed`,
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
            `the ${name} archive entry "${entry.fileName}" inflates more than ${limits.maxEntryRatio}× (a ZIP bomb?)`,
          ),
        );
      } else if (scanner?.push(chunk)) {
        stop(
          new ExtractionError(
            'corrupt',
            format.refuse === 'doctype'
              ? `the ${name} part "${entry.fileName}" declares a DTD, which ${format.plural} never do (entity expansion attack?)`
              : `the ${name} part "${entry.fileName}" declares an XML entity, which ${format.plural} have no use for (entity expansion attack?)`,
          ),
        );
      }
    });
    output.on('end', () => stop(null));
    const onError = (error: Error) =>
      stop(
        new ExtractionError(
          'corrupt',
          `the ${name} archive entry "${entry.fileName}" is damaged (${error.message})`,
        ),
      );
    output.on('error', onError);
    if (inflater) {
      raw.on('error', onError);
      raw.pipe(inflater);
    }
  });
}

/**
 * Finds "<!DOCTYPE" (or "<!ENTITY"), any case, in a byte stream delivered in chunks. OOXML and ODF
 * forbid DTDs (ECMA-376 Part 2, §8.1.4), and Office refuses files with one; refusing them here keeps
 * entity expansion (XXE, billion laughs) away from every XML parser, whatever it would do with them.
 */
class DeclarationScanner {
  private readonly needle: string;
  private tail: Buffer = Buffer.alloc(0);

  constructor(refuse: 'doctype' | 'entity') {
    this.needle = refuse;
  }

  /** True once the declaration has been seen. */
  push(chunk: Buffer): boolean {
    const window = this.tail.length > 0 ? Buffer.concat([this.tail, chunk]) : chunk;
    for (let at = window.indexOf('<!'); at !== -1; at = window.indexOf('<!', at + 2)) {
      const word = window
        .subarray(at + 2, at + 2 + this.needle.length)
        .toString('latin1')
        .toLowerCase();
      if (word === this.needle) return true;
    }
    // Enough of the end to hold a declaration split across two chunks.
    this.tail = Buffer.from(window.subarray(Math.max(0, window.length - (this.needle.length + 1))));
    return false;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
