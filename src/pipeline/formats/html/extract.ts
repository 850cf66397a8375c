// Web pages (uploaded, or fetched by URL ingest): the readable main text (what a reader view would
// show), with the page title as the first line and tables as Markdown tables. linkedom only builds
// a DOM: it runs no script and loads no stylesheet, image or frame, so nothing on the page can
// reach the network or our process. `markupText` is the same walk over markup that is all content
// (an EPUB chapter, a DOCX that mammoth turned into HTML, an e-mail's HTML body): no Readability.
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { markdownCell, renderMarkdownTable } from '../shared/markdown-table.js';
import { bomOf, normalizeText } from '../text/decode.js';
import { limitNesting } from './nesting.js';

/** The part of the DOM this module reads; linkedom's nodes have it, so do browsers'. */
interface DomNode {
  nodeType: number;
  nodeName: string;
  nodeValue: string | null;
  childNodes: ArrayLike<DomNode>;
}

interface DomDocument {
  title: string;
  body: DomNode | null;
  documentElement: DomNode | null;
}

const TEXT_NODE = 3;
const ELEMENT_NODE = 1;

/** Never shown to a reader, or not text at all. */
const SKIPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'title',
  'svg',
  'math',
  'iframe',
  'object',
  'embed',
  'canvas',
  'select',
]);
/** Blocks that stand as paragraphs of their own: a blank line around them. */
const PARAGRAPH_BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'nav',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'pre',
  'table',
  'ul',
  'ol',
  'dl',
  'figure',
  'figcaption',
  'form',
  'fieldset',
  'address',
  'details',
  'summary',
  'hr',
  'caption',
]);
/** Blocks that are lines of a larger whole (list items, table rows). */
const LINE_BLOCKS = new Set(['li', 'tr', 'dt', 'dd', 'br', 'option']);
const CELLS = new Set(['td', 'th']);
const isBlock = (tag: string) => PARAGRAPH_BLOCKS.has(tag) || LINE_BLOCKS.has(tag) || CELLS.has(tag);

/**
 * Readability's run time grows with about the cube of the nesting depth (1,000 nested <div>s take
 * over ten seconds, a denial of service in a few kilobytes) and steeply with size. Real pages stay
 * far below both; past either, the page is read whole instead.
 */
const READABILITY_MAX_DEPTH = 100;
const READABILITY_MAX_ELEMENTS = 50_000;

export function extractHtmlText(bytes: Uint8Array): string {
  const html = limitNesting(normalizeText(decodeHtml(bytes)), { separates: isBlock });
  // linkedom builds no implied <html>/<body> around a bare fragment: without this wrapper such a
  // page would come out empty.
  const source = /<html[\s>]/i.test(html)
    ? html
    : `<!doctype html><html>${html.replace(/^\s*<!doctype[^>]*>/i, '')}</html>`;

  let title = '';
  let text = '';
  try {
    const { document } = parseHTML(source) as unknown as { document: DomDocument };
    title = collapseSpaces(document.title ?? '');
    // The identity serializer hands back the article's DOM node, which saves serializing it to
    // HTML and parsing it again.
    const article =
      document.documentElement && fitsReadability(document.documentElement)
        ? new Readability(document as never, { serializer: (node: unknown) => node }).parse()
        : null;
    if (article?.content) {
      text = blockText(article.content as DomNode);
      if (article.title) title = collapseSpaces(article.title);
    }
  } catch {
    // Readability gives up on some odd documents (no <body>, say): the whole-page text below is
    // still a fair answer.
  }
  if (text === '') {
    // Readability changes the document it reads, so the fallback parses the page afresh.
    const { document } = parseHTML(source) as unknown as { document: DomDocument };
    text = document.body ? blockText(document.body) : '';
    if (text === '' && document.documentElement) text = blockText(document.documentElement);
    if (title === '') title = collapseSpaces(document.title ?? '');
  }
  if (title !== '' && !text.startsWith(title)) text = text === '' ? title : `${title}\n\n${text}`;
  return text;
}

export interface MarkupOptions {
  /** h1–h6 become Markdown headings ("## Title"), for formats the chunker splits at headings. */
  headings?: boolean;
}

/** The text of markup that is all content, from its <body> (or its root, for a fragment). */
export function markupText(markup: string, options: MarkupOptions = {}): string {
  const bounded = limitNesting(markup, { separates: isBlock });
  const source = /<html[\s>]/i.test(bounded)
    ? bounded
    : `<!doctype html><html><body>${bounded.replace(/^\s*<!doctype[^>]*>/i, '')}</body></html>`;
  const { document } = parseHTML(source) as unknown as { document: DomDocument };
  let text = document.body ? blockText(document.body, options) : '';
  if (text === '' && document.documentElement) text = blockText(document.documentElement, options);
  return text;
}

function fitsReadability(root: DomNode): boolean {
  const stack: [DomNode, number][] = [[root, 0]];
  let elements = 0;
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node.nodeType !== ELEMENT_NODE) continue;
    if (++elements > READABILITY_MAX_ELEMENTS || depth > READABILITY_MAX_DEPTH) return false;
    const children = node.childNodes;
    for (let i = 0; i < children.length; i++) stack.push([children[i]!, depth + 1]);
  }
  return true;
}

/**
 * A BOM wins, then a <meta charset> (or http-equiv) in the first 1024 bytes as browsers look for
 * it, then UTF-8. The HTTP Content-Type charset is not seen here; pages that rely on it alone and
 * are not UTF-8 come out with U+FFFD in place of their non-ASCII letters.
 */
function decodeHtml(bytes: Uint8Array): string {
  const bom = bomOf(bytes);
  if (bom) return new TextDecoder(bom.encoding).decode(bytes);
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  const declared = /<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_.:-]+)/i.exec(head)?.[1]?.toLowerCase();
  // A page that says utf-16 without a BOM is really ASCII-compatible (HTML spec, "prescan").
  const label = declared === undefined || declared.startsWith('utf-16') ? 'utf-8' : declared;
  const decoder = decoderFor(label);
  return decoder.encoding === 'windows-1252' ? decodeWindows1252(bytes) : decoder.decode(bytes);
}

/** A decoder for a charset label, UTF-8 for labels the WHATWG encoding list does not know. */
function decoderFor(label: string) {
  try {
    return new TextDecoder(label);
  } catch {
    return new TextDecoder('utf-8');
  }
}

/** What windows-1252 puts at 0x80–0x9F, where ISO-8859-1 has control codes. */
const WINDOWS_1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * Node 20's TextDecoder decodes windows-1252 (the label browsers use for latin1 and ascii too) as
 * ISO-8859-1, so curly quotes, dashes and € come out as control codes. The most common legacy
 * charset of the web deserves the right letters.
 */
function decodeWindows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes)
    .toString('latin1')
    .replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80]!);
}

/**
 * Text of a subtree with paragraph breaks where the page has blocks. Iterative, because a page of
 * 100,000 nested <div>s would overflow the stack of a recursive walk.
 */
function blockText(root: DomNode, options: MarkupOptions = {}): string {
  type Step = DomNode | { emit: string } | { leavePre: true };
  const out: string[] = [];
  const stack: Step[] = [root];
  let preDepth = 0;
  while (stack.length > 0) {
    const step = stack.pop()!;
    if ('emit' in step) {
      out.push(step.emit);
      continue;
    }
    if ('leavePre' in step) {
      preDepth--;
      continue;
    }
    if (step.nodeType === TEXT_NODE) {
      const value = step.nodeValue ?? '';
      out.push(preDepth > 0 ? value : value.replace(/[ \t\n\f\r]+/g, ' '));
      continue;
    }
    if (step.nodeType !== ELEMENT_NODE) continue;
    const tag = step.nodeName.toLowerCase();
    if (SKIPPED.has(tag)) continue;
    if (tag === 'table') {
      const table = markdownTable(step, options);
      if (table !== null) {
        out.push(`\n\n${table}\n\n`);
        continue;
      }
    }
    const around = PARAGRAPH_BLOCKS.has(tag) ? '\n\n' : LINE_BLOCKS.has(tag) ? '\n' : '';
    out.push(around);
    // Pushed in reverse so they pop in document order, after which the closing steps run.
    const level = options.headings ? HEADINGS.indexOf(tag) + 1 : 0;
    if (level > 0) out.push(`${'#'.repeat(level)} `);
    stack.push({ emit: CELLS.has(tag) ? '\t' : around });
    if (tag === 'pre') {
      preDepth++;
      stack.push({ leavePre: true });
    }
    const children = step.childNodes;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return out
    .join('')
    .split('\n')
    .map((line) => line.replace(/ {2,}/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];

/**
 * A table as a Markdown table: a row per line, so the chunker can keep rows whole (a line that
 * starts with "|" is a boundary it prefers to the words inside the row). The first row is the
 * header, as Markdown has no table without one; a cell spanning columns is repeated in each.
 * Null for a table holding another table: that is page layout, not data, and reads better as
 * paragraphs.
 */
function markdownTable(table: DomNode, options: MarkupOptions): string | null {
  const rows: DomNode[] = [];
  // Depth first, children pushed in reverse so they pop in document order.
  const stack: DomNode[] = [];
  const pushChildren = (node: DomNode) => {
    const children = node.childNodes;
    for (let i = children.length - 1; i >= 0; i--) {
      if (children[i]!.nodeType === ELEMENT_NODE) stack.push(children[i]!);
    }
  };
  pushChildren(table);
  while (stack.length > 0) {
    const node = stack.pop()!;
    const tag = node.nodeName.toLowerCase();
    if (tag === 'table') return null;
    if (tag === 'tr') rows.push(node);
    else if (tag === 'thead' || tag === 'tbody' || tag === 'tfoot') pushChildren(node);
  }
  const grid: string[][] = [];
  for (const row of rows) {
    const cells: string[] = [];
    const children = row.childNodes;
    for (let i = 0; i < children.length; i++) {
      const cell = children[i]!;
      if (cell.nodeType !== ELEMENT_NODE || !CELLS.has(cell.nodeName.toLowerCase())) continue;
      if (hasNestedTable(cell)) return null;
      const text = markdownCell(blockText(cell, { ...options, headings: false }));
      const span = Number.parseInt(attributeOf(cell, 'colspan') ?? '1', 10);
      const copies = Number.isFinite(span) && span > 1 ? Math.min(span, 100) : 1;
      for (let c = 0; c < copies; c++) cells.push(text);
    }
    if (cells.length > 0) grid.push(cells);
  }
  return renderMarkdownTable(grid);
}

function hasNestedTable(node: DomNode): boolean {
  const stack: DomNode[] = [node];
  while (stack.length > 0) {
    const children = stack.pop()!.childNodes;
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (child.nodeType !== ELEMENT_NODE) continue;
      if (child.nodeName.toLowerCase() === 'table') return true;
      stack.push(child);
    }
  }
  return false;
}

function attributeOf(node: DomNode, name: string): string | null {
  return (node as unknown as { getAttribute?: (n: string) => string | null }).getAttribute?.(name) ?? null;
}

function collapseSpaces(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
