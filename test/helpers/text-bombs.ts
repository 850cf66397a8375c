// Files whose text is many times their size while every part stays within the archive limits
// (each inflates to under 100× its packed size), one kind per format that unpacks parts, and a
// web page: for the text-bound tests (test/pipeline/extract-text-limit.test.ts) and the bench that
// counts their chunks (bench/extract-limits.bench.ts). No vitest here: bench/ imports it.
import { documentXml, docxEntries } from '../pipeline/extract-support.js';
import type { ZipEntrySpec } from './zip.js';

/**
 * Paragraphs of text that deflate about 34× (lines of a 500-line cycle, a pseudo-random word every
 * tenth line): far past the text bound, yet under the archive's 100× ratio per part.
 */
export function paragraphs(chars: number): string[] {
  const out: string[] = [];
  let paragraph = '';
  let length = 0;
  let seed = 7;
  for (let i = 0; length < chars; i++) {
    let line = `Line ${i % 500} of the document says hello. `;
    if (i % 10 === 0) {
      seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
      line += `${seed.toString(36)} `;
    }
    paragraph += line;
    length += line.length;
    if (paragraph.length >= 2_000) {
      out.push(paragraph);
      paragraph = '';
    }
  }
  if (paragraph !== '') out.push(paragraph);
  return out;
}

/** Characters of text in the tests' crafted files: over the 4 Mi floor, 20–35 per byte. */
export const TEXT_CHARS = 6_000_000;
const CT =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>';

export type UnpackingFormat = 'docx' | 'odt' | 'epub' | 'pptx' | 'xlsx';

/** A file of `format` with one paragraph (slide paragraph, row, chapter paragraph) per text. */
export function crafted(format: UnpackingFormat, texts: string[]): ZipEntrySpec[] {
  switch (format) {
    case 'docx':
      return docxEntries(documentXml(texts));
    case 'odt':
      return [
        { name: 'mimetype', data: 'application/vnd.oasis.opendocument.text', stored: true },
        {
          name: 'content.xml',
          data: `<office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text>${texts.map((t) => `<text:p>${t}</text:p>`).join('')}</office:text></office:body></office:document-content>`,
        },
      ];
    case 'epub':
      return [
        { name: 'mimetype', data: 'application/epub+zip', stored: true },
        {
          name: 'META-INF/container.xml',
          data: '<container><rootfiles><rootfile full-path="book.opf"/></rootfiles></container>',
        },
        {
          name: 'book.opf',
          data: '<package><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>',
        },
        { name: 'c1.xhtml', data: `<html><body>${texts.map((t) => `<p>${t}</p>`).join('')}</body></html>` },
      ];
    case 'pptx':
      return [
        { name: '[Content_Types].xml', data: CT },
        {
          name: 'ppt/presentation.xml',
          data: '<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>',
        },
        {
          name: 'ppt/_rels/presentation.xml.rels',
          data: '<Relationships><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide1.xml"/></Relationships>',
        },
        {
          name: 'ppt/slides/slide1.xml',
          data: `<p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree><p:sp><p:txBody>${texts.map((t) => `<a:p><a:r><a:t>${t}</a:t></a:r></a:p>`).join('')}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`,
        },
      ];
    case 'xlsx':
      return [
        { name: '[Content_Types].xml', data: CT },
        {
          name: 'xl/workbook.xml',
          data: '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet" sheetId="1" r:id="rId1"/></sheets></workbook>',
        },
        {
          name: 'xl/_rels/workbook.xml.rels',
          data: '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        },
        {
          name: 'xl/worksheets/sheet1.xml',
          data: `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${texts.map((t, i) => `<row r="${i + 1}"><c r="A${i + 1}" t="inlineStr"><is><t>${t}</t></is></c></row>`).join('')}</sheetData></worksheet>`,
        },
      ];
  }
}

/** An e-mail carrying `attachment` (a DOCX) in base64. */
export function emailWith(attachment: Buffer): string {
  const base64 = attachment.toString('base64').replace(/.{76}/g, '$&\r\n');
  return [
    'From: a@example.invalid',
    'To: b@example.invalid',
    'Subject: Report',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain',
    '',
    'See the attachment.',
    '--b1',
    'Content-Type: application/vnd.openxmlformats-officedocument.wordprocessingml.document; name="r.docx"',
    'Content-Disposition: attachment; filename="r.docx"',
    'Content-Transfer-Encoding: base64',
    '',
    base64,
    '--b1--',
    '',
  ].join('\r\n');
}

/**
 * A table whose cells each span 100 columns: the extractor repeats a spanning cell in every
 * column it covers, so 40 bytes of markup give 1,300 characters.
 */
export function spanningTable(rows: number): string {
  const row = `<tr>${'<td colspan="100">abcdefghij</td>'.repeat(10)}</tr>`;
  return `<html><body><table>${row.repeat(rows)}</table></body></html>`;
}
