// Which ZIP-based format a file is, from its first 64 KiB alone (detection's `sniff` runs on the
// API thread and reads nothing more): the local headers of the first entries name their parts.
// ODF and EPUB begin with a stored "mimetype" entry that says it; Office writes
// [Content_Types].xml and _rels/.rels first, then the main part ("word/", "ppt/", "xl/"), which is
// small enough that its name lies within the head. When the head shows neither, the archive is
// taken for a Word document, as before any other ZIP format existed.
export type ZipKind = 'docx' | 'pptx' | 'xlsx' | 'odt' | 'epub';

const LOCAL_HEADER = 0x04034b50;
const MIME_KINDS: ReadonlyMap<string, ZipKind> = new Map([
  ['application/epub+zip', 'epub'],
  ['application/vnd.oasis.opendocument.text', 'odt'],
]);

/** The format the entries in `head` show, or null (not a ZIP, or nothing telling in the head). */
export function zipKindOf(head: Buffer): ZipKind | null {
  let offset = 0;
  while (offset + 30 <= head.length && head.readUInt32LE(offset) === LOCAL_HEADER) {
    const flags = head.readUInt16LE(offset + 6);
    const method = head.readUInt16LE(offset + 8);
    const compressed = head.readUInt32LE(offset + 18);
    const nameLength = head.readUInt16LE(offset + 26);
    const extraLength = head.readUInt16LE(offset + 28);
    const nameStart = offset + 30;
    if (nameStart + nameLength > head.length) return null;
    const name = head
      .subarray(nameStart, nameStart + nameLength)
      .toString('utf8')
      .toLowerCase();
    const dataStart = nameStart + nameLength + extraLength;
    if (name === 'mimetype' && method === 0) {
      const mime = head
        .subarray(dataStart, Math.min(head.length, dataStart + compressed))
        .toString('latin1')
        .trim();
      const kind = MIME_KINDS.get(mime);
      if (kind) return kind;
    }
    if (name.startsWith('word/')) return 'docx';
    if (name.startsWith('ppt/')) return 'pptx';
    if (name.startsWith('xl/')) return 'xlsx';
    // Sizes come after the data (bit 3): where the next header starts is not known from here.
    if ((flags & 0x08) !== 0 && compressed === 0) return null;
    offset = dataStart + compressed;
  }
  return null;
}
