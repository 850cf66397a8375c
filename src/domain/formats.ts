// The file formats docindex accepts, as data: each one's id, names, media types and extensions.
// Nothing here parses a file, so everything that lists formats reads this one list cheaply: the
// HTTP route descriptions, the console, the CLI and the TypeScript client (which must stay free
// of parsers and of pipeline code). How a format is recognised and extracted is in
// pipeline/formats/<id>/, keyed by the same ids (pipeline/formats/handlers.ts).

export interface FormatSpec {
  /** The format's id: `extract(path, id)`, the worker's requests, failure messages. */
  readonly id: string;
  /** Its name in a list of formats (the console's caption): "PDF", "Markdown". */
  readonly name: string;
  /** A file of it in a sentence, as detection refuses one: "report.pdf is not a PDF (…)". */
  readonly aFile: string;
  /** What a URL may point to, in the URL ingest route's description: "an HTML page". */
  readonly aDownload: string;
  /**
   * Media types that mean this format, the one recorded as a document's `source.content_type`
   * first; the others a server may send for it.
   */
  readonly mediaTypes: readonly [string, ...string[]];
  /** Extensions clients offer and look for (the CLI, the console, the client), the usual one first. */
  readonly extensions: readonly [string, ...string[]];
  /** Further extensions detection accepts but clients do not advertise. */
  readonly otherExtensions: readonly string[];
  /** Its text comes page by page (chunks carry page numbers; threads may share one file). */
  readonly paged: boolean;
  /** The chunker splits its text at Markdown headings first. */
  readonly headings: boolean;
  /** A file of it is plain text a client may send as a JSON text document instead. */
  readonly plainText: boolean;
}

export const SUPPORTED_FORMATS = [
  {
    id: 'pdf',
    name: 'PDF',
    aFile: 'a PDF',
    aDownload: 'PDF',
    mediaTypes: ['application/pdf', 'application/x-pdf'],
    extensions: ['.pdf'],
    otherExtensions: [],
    paged: true,
    headings: false,
    plainText: false,
  },
  {
    id: 'docx',
    name: 'DOCX',
    aFile: 'a DOCX',
    aDownload: 'DOCX',
    mediaTypes: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    extensions: ['.docx'],
    otherExtensions: [],
    paged: false,
    headings: false,
    plainText: false,
  },
  {
    id: 'txt',
    name: 'TXT',
    aFile: 'text',
    aDownload: 'text',
    mediaTypes: ['text/plain'],
    extensions: ['.txt'],
    otherExtensions: ['.text'],
    paged: false,
    headings: false,
    plainText: true,
  },
  {
    id: 'md',
    name: 'Markdown',
    aFile: 'Markdown text',
    aDownload: 'Markdown',
    mediaTypes: ['text/markdown', 'text/x-markdown'],
    extensions: ['.md'],
    otherExtensions: ['.markdown'],
    paged: false,
    headings: true,
    plainText: true,
  },
  {
    id: 'html',
    name: 'HTML',
    aFile: 'an HTML page',
    aDownload: 'an HTML page',
    mediaTypes: ['text/html', 'application/xhtml+xml'],
    extensions: ['.html', '.htm'],
    otherExtensions: [],
    paged: false,
    headings: false,
    plainText: false,
  },
  {
    id: 'pptx',
    name: 'PPTX',
    aFile: 'a PPTX',
    aDownload: 'PPTX',
    mediaTypes: ['application/vnd.openxmlformats-officedocument.presentationml.presentation'],
    extensions: ['.pptx'],
    otherExtensions: [],
    paged: true,
    headings: false,
    plainText: false,
  },
  {
    id: 'xlsx',
    name: 'XLSX',
    aFile: 'an XLSX',
    aDownload: 'XLSX',
    mediaTypes: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    extensions: ['.xlsx'],
    otherExtensions: [],
    paged: false,
    headings: true,
    plainText: false,
  },
  {
    id: 'csv',
    name: 'CSV/TSV',
    aFile: 'CSV',
    aDownload: 'CSV',
    mediaTypes: ['text/csv', 'text/tab-separated-values', 'application/csv', 'text/comma-separated-values'],
    extensions: ['.csv', '.tsv'],
    otherExtensions: [],
    paged: false,
    headings: false,
    plainText: false,
  },
  {
    id: 'odt',
    name: 'ODT',
    aFile: 'an ODT',
    aDownload: 'ODT',
    mediaTypes: ['application/vnd.oasis.opendocument.text'],
    extensions: ['.odt'],
    otherExtensions: [],
    paged: false,
    headings: true,
    plainText: false,
  },
  {
    id: 'epub',
    name: 'EPUB',
    aFile: 'an EPUB',
    aDownload: 'EPUB',
    mediaTypes: ['application/epub+zip'],
    extensions: ['.epub'],
    otherExtensions: [],
    paged: false,
    headings: true,
    plainText: false,
  },
  {
    id: 'rtf',
    name: 'RTF',
    aFile: 'RTF',
    aDownload: 'RTF',
    mediaTypes: ['application/rtf', 'text/rtf'],
    extensions: ['.rtf'],
    otherExtensions: [],
    paged: false,
    headings: false,
    plainText: false,
  },
  {
    id: 'eml',
    name: 'E-mail (EML)',
    aFile: 'an e-mail message',
    aDownload: 'an e-mail message',
    mediaTypes: ['message/rfc822'],
    extensions: ['.eml'],
    otherExtensions: [],
    paged: false,
    headings: false,
    plainText: false,
  },
  {
    id: 'png',
    name: 'PNG',
    aFile: 'a PNG image',
    aDownload: 'a PNG image',
    mediaTypes: ['image/png'],
    extensions: ['.png'],
    otherExtensions: [],
    paged: false,
    headings: false,
    plainText: false,
  },
  {
    id: 'jpeg',
    name: 'JPEG',
    aFile: 'a JPEG image',
    aDownload: 'a JPEG image',
    mediaTypes: ['image/jpeg', 'image/jpg', 'image/pjpeg'],
    extensions: ['.jpg', '.jpeg'],
    otherExtensions: ['.jpe', '.jfif'],
    paged: false,
    headings: false,
    plainText: false,
  },
  {
    id: 'tiff',
    name: 'TIFF',
    aFile: 'a TIFF image',
    aDownload: 'a TIFF image',
    mediaTypes: ['image/tiff', 'image/tiff-fx'],
    extensions: ['.tiff', '.tif'],
    otherExtensions: [],
    paged: true,
    headings: false,
    plainText: false,
  },
] as const satisfies readonly FormatSpec[];

export type FormatId = (typeof SUPPORTED_FORMATS)[number]['id'];

export const FORMAT_IDS: readonly FormatId[] = SUPPORTED_FORMATS.map((format) => format.id);

// Maps, not object lookups: a file named "x.constructor" must not find Object.prototype.
const BY_ID: ReadonlyMap<string, FormatSpec & { id: FormatId }> = new Map(
  SUPPORTED_FORMATS.map((format) => [format.id, format]),
);

export function formatSpec(id: FormatId): FormatSpec & { id: FormatId } {
  return BY_ID.get(id)!;
}

/** The media type a document of this format records as its `source.content_type`. */
export function contentTypeOf(format: FormatId): string {
  return formatSpec(format).mediaTypes[0];
}

/** The format a recorded `source.content_type` stands for (only the recorded types), or null. */
export function formatOfContentType(contentType: string | null): FormatId | null {
  if (contentType === null) return null;
  const base = contentType.split(';')[0]!.trim().toLowerCase();
  return SUPPORTED_FORMATS.find((format) => format.mediaTypes[0] === base)?.id ?? null;
}

/** Extension (lowercase, with its dot) → format, for every extension detection accepts. */
export const FORMAT_BY_EXTENSION: ReadonlyMap<string, FormatId> = new Map(
  SUPPORTED_FORMATS.flatMap((format) =>
    [...format.extensions, ...format.otherExtensions].map((extension) => [extension, format.id] as const),
  ),
);

/** Media type (lowercase, without parameters) → format, for every media type of every format. */
export const FORMAT_BY_MEDIA_TYPE: ReadonlyMap<string, FormatId> = new Map(
  SUPPORTED_FORMATS.flatMap((format) => format.mediaTypes.map((type) => [type, format.id] as const)),
);

/** The extensions clients offer, in registry order: `.pdf`, …, `.html`, `.htm`. */
export const ADVERTISED_EXTENSIONS: readonly string[] = SUPPORTED_FORMATS.flatMap((format) => [
  ...format.extensions,
]);

/** "a, b, c or d". */
export function listInProse(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
