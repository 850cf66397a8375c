// The benchmark corpus: real prose and Markdown written by people — the READMEs and docs shipped in
// node_modules — read in a fixed order, so every run (and every contestant in a run) gets the same
// text. Documents are cut from it at whitespace; when a run needs more text than there is, later
// passes start at a shifted offset and never where a document of an earlier pass started, so no
// two documents are the same slice.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './lib.js';

/** Files smaller than this are mostly badges and links, not prose. */
const MIN_FILE_BYTES = 1_024;

let cached: string | null = null;

function* markdownFiles(dir: string): Generator<string> {
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of entries) {
    const full = path.join(dir, name);
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(full);
    } catch {
      continue;
    }
    if (stat.isDirectory()) yield* markdownFiles(full);
    else if (/\.(md|markdown)$/i.test(name) && stat.size >= MIN_FILE_BYTES) yield full;
  }
}

/**
 * Every Markdown file under node_modules, de-duplicated by content (several packages ship the
 * same README), joined by blank lines. About 5 MB with this project's dependencies.
 */
export function corpusText(): string {
  if (cached !== null) return cached;
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const file of markdownFiles(path.join(projectRoot(), 'node_modules'))) {
    const text = readFileSync(file, 'utf8').replaceAll('\r\n', '\n').replaceAll('\0', '');
    const digest = createHash('sha256').update(text).digest('hex');
    if (seen.has(digest)) continue;
    seen.add(digest);
    parts.push(text.trim());
  }
  if (parts.length === 0) throw new Error('no Markdown files under node_modules: run npm install');
  cached = parts.join('\n\n');
  return cached;
}

/**
 * `count` documents of about `charsEach` characters, cut consecutively from the corpus at
 * whitespace. The Markdown of the corpus is kept as is: it is what users send.
 */
export function corpusDocuments(count: number, charsEach: number): string[] {
  const text = corpusText();
  const docs: string[] = [];
  // Where documents started: a later pass that comes to one of them would cut the same slices as
  // the pass before it from there on, so it starts one word further instead.
  const starts = new Set<number>();
  let pass = 0;
  let at = 0;
  while (docs.length < count) {
    while (at < text.length && starts.has(at)) {
      const space = text.indexOf(' ', at + 1);
      at = space === -1 ? text.length : space + 1;
    }
    starts.add(at);
    let end = Math.min(text.length, at + charsEach);
    if (end < text.length) {
      const space = text.indexOf(' ', end);
      end = space === -1 ? text.length : space;
    }
    const slice = text.slice(at, end).trim();
    if (slice.length >= charsEach / 2) docs.push(slice);
    at = end;
    if (text.length - at < charsEach) {
      // Next pass: shift by a fraction of a document so its slices differ from this pass's.
      pass += 1;
      at = text.indexOf(' ', Math.floor((charsEach * pass) / 7) % charsEach) + 1;
    }
  }
  return docs;
}

/** Total UTF-8 size of some texts. */
export function utf8Bytes(texts: string[]): number {
  let bytes = 0;
  for (const t of texts) bytes += Buffer.byteLength(t, 'utf8');
  return bytes;
}

/** The corpus as ASCII only (other characters become spaces): safe to cut at any byte. */
export function asciiCorpus(): string {
  return corpusText().replace(/[^\t\n\x20-\x7e]/g, ' ');
}
