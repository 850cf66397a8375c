// Every package the lock file can install, with its licence, checked against what an Apache-2.0
// project may depend on. `npm run licences` prints the list; the test suite fails on a package
// whose licence is not allowed or cannot be read.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Permissive licences: any use, with attribution at most. */
const PERMISSIVE = new Set([
  '0BSD',
  'Apache-2.0',
  'BlueOak-1.0.0',
  'BSD-2-Clause',
  'BSD-3-Clause',
  'CC-BY-4.0',
  'CC0-1.0',
  'ISC',
  'MIT',
  'MIT-0',
  'Python-2.0',
  'Unlicense',
  'WTFPL',
  'Zlib',
]);

/**
 * Weak copyleft: allowed for a library used unmodified as its own package (sharp's prebuilt
 * libvips is a shared library loaded at run time); it never reaches docindex's own code.
 */
const WEAK_COPYLEFT = new Set(['LGPL-3.0-or-later', 'MPL-2.0']);

/**
 * Packages whose manifest gives no SPDX expression, with what their own licence text says
 * (name@version, so a new release is read again).
 */
export const CLARIFIED: Readonly<Record<string, string>> = {
  'busboy@0.3.1': 'MIT', // `licenses: [{type: MIT}]`
  'dicer@0.3.0': 'MIT', // `licenses: [{type: MIT}]`
  'streamsearch@0.1.2': 'MIT', // `licenses: [{type: MIT}]`
  'reserved@0.1.2': 'MIT', // `licenses: [{type: MIT}]`
  'humanize-number@0.0.2': 'MIT', // its Readme's "License" section
  'only@0.0.2': 'MIT', // its Readme's "License" section
  'duck@0.1.12': 'BSD-2-Clause', // "BSD"; its LICENSE is the two-clause text
};

/** `sqlite-vec` and its platform builds write "MIT OR Apache" for MIT OR Apache-2.0. */
const SPELLINGS: Readonly<Record<string, string>> = { Apache: 'Apache-2.0' };

export type Verdict = 'permissive' | 'weak-copyleft' | 'refused';

/** An SPDX expression's verdict: OR takes the best branch, AND the worst, `+` reads "or later". */
export function judge(expression: string): Verdict {
  const tokens = expression.match(/\(|\)|[^\s()]+/g) ?? [];
  let at = 0;
  const rank: Record<Verdict, number> = { permissive: 2, 'weak-copyleft': 1, refused: 0 };
  const byRank: Verdict[] = ['refused', 'weak-copyleft', 'permissive'];
  const leaf = (): Verdict => {
    const token = tokens[at++];
    if (token === '(') {
      const inner = or();
      if (tokens[at++] !== ')') return 'refused';
      return inner;
    }
    if (token === undefined) return 'refused';
    let id = SPELLINGS[token] ?? token;
    if (tokens[at] === 'WITH') at += 2; // an exception only ever widens what the licence allows
    if (id.endsWith('+')) id = `${id.slice(0, -1)}-or-later`;
    if (PERMISSIVE.has(id)) return 'permissive';
    if (WEAK_COPYLEFT.has(id)) return 'weak-copyleft';
    return 'refused';
  };
  const and = (): Verdict => {
    let worst = rank[leaf()];
    while (tokens[at] === 'AND') {
      at++;
      worst = Math.min(worst, rank[leaf()]);
    }
    return byRank[worst] as Verdict;
  };
  const or = (): Verdict => {
    let best = rank[and()];
    while (tokens[at] === 'OR') {
      at++;
      best = Math.max(best, rank[and()]);
    }
    return byRank[best] as Verdict;
  };
  const verdict = or();
  return at === tokens.length ? verdict : 'refused';
}

export interface PackageLicence {
  name: string;
  version: string;
  licence: string | null;
  dev: boolean;
  verdict: Verdict;
}

interface LockEntry {
  version?: string;
  license?: string;
  dev?: boolean;
  link?: boolean;
}

/** Every package of a package-lock.json (v2/v3), the root excluded, with its verdict. */
export function lockLicences(lockFile: string): PackageLicence[] {
  const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const out: PackageLicence[] = [];
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (where === '' || entry.link) continue;
    const name = where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const version = entry.version ?? '';
    const licence = CLARIFIED[`${name}@${version}`] ?? entry.license ?? null;
    out.push({
      name,
      version,
      licence,
      dev: entry.dev === true,
      verdict: licence === null ? 'refused' : judge(licence),
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const all = lockLicences(path.join(ROOT, 'package-lock.json'));
  for (const p of all) {
    const flags = [p.dev ? 'dev' : '', p.verdict === 'permissive' ? '' : p.verdict].filter(Boolean);
    process.stdout.write(`${p.name}@${p.version}\t${p.licence ?? '(none)'}\t${flags.join(' ')}\n`);
  }
  const refused = all.filter((p) => p.verdict === 'refused');
  process.stderr.write(`${all.length} packages, ${refused.length} refused\n`);
  process.exitCode = refused.length === 0 ? 0 : 1;
}
