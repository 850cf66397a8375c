// Reads the project's Markdown documentation for the documentation tests: which files there are,
// the anchors their headings make (as GitHub renders them), their links and their code blocks.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** README.md, every page under docs/ and the Python client's README, as paths from ROOT. */
export function documentationFiles(): string[] {
  const pages = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages, 'clients/python/README.md'];
}

export function readDoc(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}

export interface CodeBlock {
  /** The first word of the info string (`sh`, `ts`, `python`, …), '' when there is none. */
  lang: string;
  /** The other words of the info string, e.g. `no-test`. */
  flags: string[];
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

/** The fenced code blocks of a Markdown text, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let open: { fence: string; lang: string; flags: string[]; line: number; body: string[] } | null = null;
  lines.forEach((text, index) => {
    if (open === null) {
      const start = /^(```+|~~~+)\s*(.*)$/.exec(text);
      if (start) {
        const [lang = '', ...flags] = start[2]!.trim().split(/\s+/).filter(Boolean);
        open = { fence: start[1]!, lang, flags, line: index + 1, body: [] };
      }
    } else if (text.startsWith(open.fence) && text.trim() === open.fence) {
      blocks.push({ lang: open.lang, flags: open.flags, code: open.body.join('\n'), line: open.line });
      open = null;
    } else {
      open.body.push(text);
    }
  });
  return blocks;
}

/** The Markdown with every fenced block and inline code span blanked (line numbers kept). */
function prose(markdown: string): string {
  let inFence = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^(```|~~~)/.test(line)) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : line.replace(/`[^`]*`/g, '``');
    })
    .join('\n');
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces become hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the headings of a Markdown text make, repeated headings numbered as GitHub does. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

export interface Link {
  target: string;
  line: number;
}

/** Links of the Markdown's prose (`[text](target)`), outside code, that stay in this repository. */
export function localLinks(markdown: string): Link[] {
  const links: Link[] = [];
  prose(markdown)
    .split('\n')
    .forEach((line, index) => {
      for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        links.push({ target, line: index + 1 });
      }
    });
  return links;
}
