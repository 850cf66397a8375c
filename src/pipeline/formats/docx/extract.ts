// Word documents: first the archive limits every ZIP-based format is held to (shared/archive.ts),
// then mammoth turns the document into HTML, which the HTML walk reads as text with the tables as
// Markdown tables (mammoth's raw text would give each cell as a paragraph of its own). mammoth
// (through JSZip) inflates the whole archive into memory, so it only ever sees archives that passed.
import { readFile } from 'node:fs/promises';
import mammoth from 'mammoth';
import { ExtractionError } from '../../extract/errors.js';
import { markupText } from '../html/extract.js';
import { type ArchiveLimits, checkArchive, type ZipFormat } from '../shared/archive.js';
import { normalizeText } from '../text/decode.js';
import { DOCX_LIMITS } from './limits.js';

const DOCX: ZipFormat = {
  name: 'DOCX',
  plural: 'Word documents',
  aKind: 'a Word document',
  required: ['[content_types].xml', 'word/document.xml'],
  // The parts mammoth parses as XML.
  parsedXml: (name) =>
    name === '[content_types].xml' ||
    name.endsWith('.rels') ||
    (name.startsWith('word/') && name.endsWith('.xml')),
  refuse: 'doctype',
  legacyName: '.doc',
};

/**
 * Rejects, without inflating further than the first limit crossed: too many entries, duplicate
 * names, an entry inflating beyond the ratio, too many bytes in total (→ archive_limits); a
 * damaged archive, a part with a DTD, a missing word/document.xml, a legacy .doc (→ corrupt);
 * a password-protected document or encrypted entries (→ encrypted).
 */
export function checkDocxArchive(filePath: string, limits: ArchiveLimits = DOCX_LIMITS): Promise<void> {
  return checkArchive(filePath, DOCX, limits);
}

/** Body text with a blank line between paragraphs, tables as Markdown tables. */
export async function extractDocxText(filePath: string): Promise<string> {
  await checkDocxArchive(filePath);
  const buffer = await readFile(filePath);
  let html: string;
  try {
    // Images would come back as base64 data URIs, only to be dropped: leave them out at once.
    ({ value: html } = await mammoth.convertToHtml(
      { buffer },
      { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) },
    ));
  } catch (error) {
    throw new ExtractionError(
      'corrupt',
      `the DOCX cannot be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  return normalizeText(markupText(withoutNoteLinks(html)))
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * mammoth links each footnote or endnote reference ("[1]") to the note, which it puts at the end,
 * and each note back ("↑"). The notes' text stays (it is the document's); the links are navigation.
 */
function withoutNoteLinks(html: string): string {
  return html
    .replace(/<sup><a href="#(?:footnote|endnote)-[^"]*" id="[^"]*">\[\d+\]<\/a><\/sup>/g, '')
    .replace(/ ?<a href="#(?:footnote|endnote)-ref-[^"]*">\u2191<\/a>/g, '');
}
