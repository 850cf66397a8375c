// A bound on how deep markup nests before linkedom builds a DOM from it. htmlparser2, the parser
// under linkedom, keeps its open elements in an array it unshifts and shifts, so every tag costs
// the current depth: 200,000 nested <div>s (2.2 MB) took minutes, and every walk of a deep DOM
// costs as much again. Browsers stop nesting at 512 open elements (Blink and WebKit's
// maximumHTMLParserDOMTreeDepth) and put deeper elements beside their parent; here, tags that
// would open an element deeper than that are taken out of the markup with their closing tags,
// so their text stays, read as part of the enclosing element (a block's tags leave a space, so
// its words stay apart from the next block's).
//
// Which tags open and close elements follows htmlparser2's own rules (its tokenizer, and the
// implied closes, void elements and foreign-content self-closing of its Parser, copied below), so
// the depth counted here is the depth the parser builds: a page of 10,000 unclosed <p>s is 1
// deep, as it is for the parser, and keeps all its paragraphs.
import { Tokenizer } from 'htmlparser2';

/** Open elements at most, as browsers allow. */
export const MAX_MARKUP_DEPTH = 512;

const P = new Set(['p']);
const FORM = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const TABLE_SECTION = new Set(['thead', 'tbody']);
const DD_DT = new Set(['dd', 'dt']);
const RT_RP = new Set(['rt', 'rp']);
/** An opening tag of the key closes open elements of these names on top of the stack. */
const OPEN_IMPLIES_CLOSE = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['li', new Set(['li'])],
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', DD_DT],
  ['dt', DD_DT],
  ['rt', RT_RP],
  ['rp', RT_RP],
  ['tbody', TABLE_SECTION],
  ['tfoot', TABLE_SECTION],
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((tag) => [tag, FORM] as const),
  ...[
    'p',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((tag) => [tag, P] as const),
]);
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
const FOREIGN = new Set(['math', 'svg']);
const INTEGRATION = new Set([
  'mi',
  'mo',
  'mn',
  'ms',
  'mtext',
  'annotation-xml',
  'foreignobject',
  'desc',
  'title',
]);

export interface NestingOptions {
  maxDepth?: number;
  /** Elements whose text stands apart from what follows (blocks): their tags become a space. */
  separates?: (name: string) => boolean;
}

/**
 * `html` without the tags that would nest elements deeper than the bound, and without their
 * closing tags; `html` itself when nothing nests that deep.
 */
export function limitNesting(html: string, options: NestingOptions = {}): string {
  const maxDepth = options.maxDepth ?? MAX_MARKUP_DEPTH;
  const separates = options.separates ?? (() => false);
  if (!mayNestDeeper(html, maxDepth)) return html;
  const open: string[] = [];
  /** How many of each name are open, so a closing tag finds its element without a scan. */
  const openCount = new Map<string, number>();
  /** Foreign content (svg, math: true) or HTML inside it (false), innermost last. */
  const foreign: boolean[] = [];
  /** Opening tags taken out, by name, whose closing tags are still to come. */
  const dropped = new Map<string, number>();
  /** [from, to) ranges of the markup to take out, in order, and what each becomes. */
  const cuts: number[] = [];
  const replacements: string[] = [];
  const cut = (name: string, from: number, to: number) => {
    cuts.push(from, to);
    replacements.push(separates(name) ? ' ' : '');
  };
  let tag: { name: string; start: number; drop: boolean } | null = null;

  const add = (map: Map<string, number>, name: string, by: number) =>
    map.set(name, (map.get(name) ?? 0) + by);
  const push = (name: string) => {
    open.push(name);
    add(openCount, name, 1);
  };
  const pop = () => {
    const name = open.pop();
    if (name !== undefined) add(openCount, name, -1);
    return name;
  };
  const nameAt = (start: number, end: number) => html.slice(start, end).toLowerCase();

  const tokenizer = new Tokenizer(
    { xmlMode: false, decodeEntities: true },
    {
      onopentagname(start, end) {
        const name = nameAt(start, end);
        const implied = OPEN_IMPLIES_CLOSE.get(name);
        if (implied) while (open.length > 0 && implied.has(open.at(-1)!)) pop();
        const drop = !VOID.has(name) && open.length >= maxDepth;
        tag = { name, start: start - 1, drop };
        if (drop || VOID.has(name)) return;
        push(name);
        if (FOREIGN.has(name)) foreign.push(true);
        else if (INTEGRATION.has(name)) foreign.push(false);
      },
      onopentagend(end) {
        if (tag?.drop) {
          cut(tag.name, tag.start, end + 1);
          add(dropped, tag.name, 1);
        }
        tag = null;
      },
      onselfclosingtag(end) {
        // Self-closing counts only in foreign content; elsewhere `<div/>` opens a <div>.
        const closes = foreign.at(-1) === true;
        if (tag?.drop) {
          cut(tag.name, tag.start, end + 1);
          if (!closes) add(dropped, tag.name, 1);
        } else if (tag && closes && open.at(-1) === tag.name) {
          pop();
        }
        tag = null;
      },
      onclosetag(start, end) {
        const name = nameAt(start, end);
        if ((dropped.get(name) ?? 0) > 0) {
          add(dropped, name, -1);
          // From its "</" (spaces may come before the name) to its ">" (anything may come after).
          const close = html.indexOf('>', end);
          cut(name, html.lastIndexOf('<', start), close === -1 ? html.length : close + 1);
          return;
        }
        if (FOREIGN.has(name) || INTEGRATION.has(name)) foreign.pop();
        if (VOID.has(name) || (openCount.get(name) ?? 0) === 0) return;
        while (pop() !== name) {
          // Closing an element closes every element opened inside it.
        }
      },
      onattribdata() {},
      onattribentity() {},
      onattribend() {},
      onattribname() {},
      oncdata() {},
      oncomment() {},
      ondeclaration() {},
      onend() {},
      onprocessinginstruction() {},
      ontext() {},
      ontextentity() {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  if (cuts.length === 0) return html;
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < cuts.length; i += 2) {
    parts.push(html.slice(from, cuts[i]), replacements[i / 2]!);
    from = cuts[i + 1]!;
  }
  parts.push(html.slice(from));
  return parts.join('');
}

/** False when the markup holds too few '<' to open `maxDepth` elements (most pages, quickly). */
function mayNestDeeper(html: string, maxDepth: number): boolean {
  let tags = 0;
  for (let at = html.indexOf('<'); at !== -1; at = html.indexOf('<', at + 1)) {
    if (++tags > maxDepth) return true;
  }
  return false;
}
