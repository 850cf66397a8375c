// OpenDocument text: content.xml's body in document order, headings as Markdown headings (the
// chunker splits there first), paragraphs and list items as lines, tables as Markdown tables. No
// maintained pure-JS library reads ODT text, and the body is one XML part, so saxes reads it
// (shared/xml.ts) after the archive limits. Footnote citations and annotations are left out;
// note bodies stay (they are the document's text).
import { ExtractionError } from '../../extract/errors.js';
import { checkArchive, readZipEntries, type ZipFormat } from '../shared/archive.js';
import { markdownCell, renderMarkdownTable } from '../shared/markdown-table.js';
import { readXml } from '../shared/xml.js';
import { normalizeText } from '../text/decode.js';

export const ODT: ZipFormat = {
  name: 'ODT',
  plural: 'OpenDocument files',
  aKind: 'an OpenDocument text',
  required: ['mimetype', 'content.xml'],
  parsedXml: (name) => name.endsWith('.xml') || name.endsWith('.rdf'),
  refuse: 'doctype',
};

/** Elements whose text is not the document's. */
const SKIPPED = new Set(['note-citation', 'annotation', 'tracked-changes', 'sequence-decls']);

export async function extractOdtText(filePath: string): Promise<string> {
  await checkArchive(filePath, ODT);
  const parts = await readZipEntries(
    filePath,
    ODT,
    (name) => name === 'content.xml' || name === 'meta-inf/manifest.xml' || name === 'mimetype',
  );
  const mimetype = parts.get('mimetype')?.toString('latin1').trim();
  if (mimetype !== 'application/vnd.oasis.opendocument.text') {
    throw new ExtractionError(
      'corrupt',
      `the file is an OpenDocument package but not a text document (${mimetype ?? 'no mimetype'})`,
    );
  }
  // A password-protected ODT keeps content.xml encrypted; its manifest says so.
  if (parts.get('meta-inf/manifest.xml')?.includes('encryption-data')) {
    throw new ExtractionError('encrypted', 'the ODT is password-protected');
  }
  return bodyText(parts.get('content.xml')!);
}

function bodyText(xml: Buffer): string {
  const blocks: string[] = [];
  /** Tables being read, innermost last; a nested table's text goes into its outer cell. */
  const tables: { rows: string[][]; row: string[] | null; cell: string[] | null }[] = [];
  let inBody = false;
  let skipping = 0;
  let paragraph: string | null = null;
  /** Paragraphs open: a text box's paragraphs sit inside another paragraph, and join its text. */
  let paragraphDepth = 0;
  let prefix = '';
  let listDepth = 0;
  const emit = (text: string) => {
    const table = tables.at(-1);
    if (table?.cell) table.cell.push(text);
    else if (text.trim() !== '') blocks.push(text);
  };
  readXml(
    xml,
    {
      open(name, attributes) {
        if (name === 'text' && !inBody) inBody = true;
        if (!inBody) return;
        if (SKIPPED.has(name)) skipping++;
        if (skipping > 0) return;
        switch (name) {
          case 'h':
          case 'p':
            if (paragraphDepth++ > 0) {
              paragraph += ' ';
              break;
            }
            paragraph = '';
            if (name === 'h') {
              const level = Number.parseInt(attributes['outline-level'] ?? '1', 10) || 1;
              prefix = `${'#'.repeat(Math.min(6, Math.max(1, level)))} `;
            } else {
              prefix = listDepth > 0 && tables.length === 0 ? '- ' : '';
            }
            break;
          case 'list':
            listDepth++;
            break;
          case 's':
            if (paragraph !== null)
              paragraph += ' '.repeat(Math.min(Number.parseInt(attributes.c ?? '1', 10) || 1, 100));
            break;
          case 'tab':
            if (paragraph !== null) paragraph += '\t';
            break;
          case 'line-break':
            if (paragraph !== null) paragraph += '\n';
            break;
          case 'table':
            tables.push({ rows: [], row: null, cell: null });
            break;
          case 'table-row':
            if (tables.at(-1)) tables.at(-1)!.row = [];
            break;
          case 'table-cell':
          case 'covered-table-cell':
            if (tables.at(-1)) tables.at(-1)!.cell = [];
            break;
        }
      },
      text(text) {
        if (inBody && skipping === 0 && paragraph !== null) paragraph += text;
      },
      close(name) {
        if (!inBody) return;
        if (SKIPPED.has(name)) {
          skipping--;
          return;
        }
        if (skipping > 0) return;
        const table = tables.at(-1);
        switch (name) {
          case 'h':
          case 'p':
            if (--paragraphDepth === 0 && paragraph !== null) {
              const text = paragraph.trim();
              if (text !== '') emit(`${prefix}${text}`);
              paragraph = null;
            }
            break;
          case 'list':
            listDepth--;
            break;
          case 'table-cell':
          case 'covered-table-cell':
            if (table?.row && table.cell) table.row.push(table.cell.join(' '));
            if (table) table.cell = null;
            break;
          case 'table-row':
            if (table?.row && table.row.length > 0) table.rows.push(table.row);
            if (table) table.row = null;
            break;
          case 'table': {
            tables.pop();
            const outer = tables.at(-1);
            // A table in a cell cannot be a Markdown table: its cells' text joins the outer cell.
            if (outer?.cell) outer.cell.push((table?.rows ?? []).map((row) => row.join(' ')).join(' '));
            else if (table && table.rows.length > 0) {
              blocks.push(renderMarkdownTable(table.rows.map((row) => row.map(markdownCell))));
            }
            break;
          }
          case 'text':
            inBody = false;
            break;
        }
      },
    },
    'the ODT part content.xml',
  );
  return normalizeText(blocks.join('\n\n')).trim();
}
