// PowerPoint text, slide by slide in presentation order (ppt/presentation.xml's slide list, not
// the slide files' numbers): every shape's paragraphs, tables as Markdown tables, then the
// speaker notes. No library reads .pptx text in pure JS with tables and notes, and the format is
// a handful of XML parts, so we read them with saxes (shared/xml.ts), after the archive limits.

import { ExtractionError } from '../../extract/errors.js';
import type { PagedDocument } from '../handler.js';
import { checkArchive, readZipEntries, type ZipFormat } from '../shared/archive.js';
import { markdownCell, renderMarkdownTable } from '../shared/markdown-table.js';
import { readRelationships, readXml, resolvePart } from '../shared/xml.js';
import { normalizeText } from '../text/decode.js';

export const PPTX: ZipFormat = {
  name: 'PPTX',
  plural: 'PowerPoint presentations',
  aKind: 'a PowerPoint presentation',
  required: ['[content_types].xml', 'ppt/presentation.xml'],
  parsedXml: (name) => name.endsWith('.xml') || name.endsWith('.rels'),
  refuse: 'doctype',
  legacyName: '.ppt',
};

const SLIDE = /\/relationships\/slide$/;
const NOTES = /\/relationships\/notesSlide$/;
/** Placeholders that repeat the slide's furniture, not its content. */
const FURNITURE = new Set(['sldNum', 'dt', 'ftr', 'hdr', 'sldImg']);

export async function openPptx(filePath: string): Promise<PagedDocument> {
  await checkArchive(filePath, PPTX);
  const parts = await readZipEntries(
    filePath,
    PPTX,
    (name) =>
      name === 'ppt/presentation.xml' ||
      name === 'ppt/_rels/presentation.xml.rels' ||
      /^ppt\/(slides|notesslides)\/(_rels\/)?[^/]+\.(xml|rels)$/.test(name),
  );
  const presentation = parts.get('ppt/presentation.xml');
  if (!presentation) throw new ExtractionError('corrupt', 'the PPTX has no ppt/presentation.xml');
  const relationships = readRelationships(parts.get('ppt/_rels/presentation.xml.rels'), 'the PPTX');
  const slideIds: string[] = [];
  readXml(
    presentation,
    {
      open(name, attributes) {
        if (name !== 'sldId') return;
        // The relationship id is the prefixed "id" (r:id); the unprefixed one is the slide's number.
        const rid = Object.entries(attributes).find(([key]) => key.endsWith(':id'));
        if (rid) slideIds.push(rid[1]);
      },
    },
    'the PPTX part ppt/presentation.xml',
  );
  // Each slide once, where the list first names it: a list that names one slide thousands of
  // times would otherwise multiply a small file's text past any ratio the archive checks.
  const slides = [
    ...new Set(
      slideIds
        .map((id) => relationships.get(id))
        .filter((rel) => rel !== undefined && SLIDE.test(rel.type))
        .map((rel) => resolvePart('ppt', rel!.target)),
    ),
  ];
  return {
    numPages: slides.length,
    async pageTexts(from, to) {
      const texts: string[] = [];
      for (let page = from; page <= to; page++) texts.push(slideText(parts, slides[page - 1]!));
      return texts;
    },
    async close() {},
  };
}

/** A slide's shapes, then its notes (after "Notes:"). */
function slideText(parts: ReadonlyMap<string, Buffer>, slidePart: string): string {
  const xml = parts.get(slidePart);
  if (!xml) return '';
  const body = shapesText(xml, `the PPTX part ${slidePart}`, false);
  const slash = slidePart.lastIndexOf('/');
  const relsPart = `${slidePart.slice(0, slash)}/_rels/${slidePart.slice(slash + 1)}.rels`;
  const notesRel = [...readRelationships(parts.get(relsPart), `the PPTX part ${relsPart}`).values()].find(
    (rel) => NOTES.test(rel.type),
  );
  const notesPart = notesRel ? resolvePart(slidePart.slice(0, slash), notesRel.target) : null;
  const notesXml = notesPart ? parts.get(notesPart) : undefined;
  const notes = notesXml ? shapesText(notesXml, `the PPTX part ${notesPart}`, true) : '';
  const text = notes === '' ? body : body === '' ? `Notes:\n${notes}` : `${body}\n\nNotes:\n${notes}`;
  return normalizeText(text).trim();
}

/**
 * Shapes in document order, a blank line between them, a line per paragraph; a table (a:tbl) as a
 * Markdown table. `notesOnly`: of a notes page, only the body placeholder (the notes themselves).
 */
function shapesText(xml: Buffer, what: string, notesOnly: boolean): string {
  const blocks: string[] = [];
  let paragraphs: string[] = [];
  let line = '';
  let inText = false;
  let skipShape = false;
  let shapeDepth = 0;
  let table: string[][] | null = null;
  let row: string[] | null = null;
  let cell: string[] | null = null;
  let cellMerged = false;
  const endShape = () => {
    if (!skipShape) {
      const text = paragraphs.join('\n').trim();
      if (text !== '') blocks.push(text);
    }
    paragraphs = [];
  };
  readXml(
    xml,
    {
      open(name, attributes) {
        switch (name) {
          case 'sp':
          case 'graphicFrame':
            if (shapeDepth++ === 0) {
              skipShape = notesOnly;
              paragraphs = [];
            }
            break;
          case 'ph': {
            const type = attributes.type ?? 'body';
            if (notesOnly) skipShape = type !== 'body';
            else if (FURNITURE.has(type)) skipShape = true;
            break;
          }
          case 'tbl':
            table = [];
            break;
          case 'tr':
            row = [];
            break;
          case 'tc':
            cell = [];
            // A cell a merge to its left covers (hMerge; the merged cell itself has gridSpan)
            // repeats the merged text, as the reader sees it spread over those columns.
            cellMerged = attributes.hMerge === '1' || attributes.hMerge === 'true';
            break;
          case 'p':
            line = '';
            break;
          case 't':
            inText = true;
            break;
          case 'br':
            line += '\n';
            break;
        }
      },
      text(text) {
        if (inText) line += text;
      },
      close(name) {
        switch (name) {
          case 't':
            inText = false;
            break;
          case 'p':
            if (cell) cell.push(line);
            else paragraphs.push(line.trimEnd());
            break;
          case 'tc':
            if (row && cell) {
              row.push(cellMerged && row.length > 0 ? row.at(-1)! : markdownCell(cell.join(' ')));
            }
            cell = null;
            break;
          case 'tr':
            if (table && row && row.length > 0) table.push(row);
            row = null;
            break;
          case 'tbl':
            if (table) paragraphs.push(renderMarkdownTable(table));
            table = null;
            break;
          case 'sp':
          case 'graphicFrame':
            if (--shapeDepth === 0) endShape();
            break;
        }
      },
    },
    what,
  );
  return blocks.join('\n\n');
}
