#!/usr/bin/env node
// Compiles the TypeScript sources into dist/ and links the `docindex` command into
// node_modules/.bin, so `npx docindex` runs this checkout at once instead of packing it.
// With --if-stale (npm start, npm test) it compiles only when a source differs from the last
// build: a start with nothing changed costs a hash of the sources (milliseconds), not a compile.
// Plain JavaScript: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = path.join(ROOT, 'dist', '.sources-hash');
/** What tsconfig.json's `include` compiles, and what changes how it compiles. */
const SOURCE_DIRS = ['src', 'bench', 'scripts', 'test'];
const SOURCE_FILES = ['tsconfig.json', 'package.json'];

function* sourceFiles(dir) {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (/\.(ts|json)$/.test(entry.name)) yield full;
  }
}

function sourcesHash() {
  const hash = createHash('sha256');
  const files = [...SOURCE_FILES.map((f) => path.join(ROOT, f))];
  for (const dir of SOURCE_DIRS) {
    if (existsSync(path.join(ROOT, dir))) files.push(...sourceFiles(path.join(ROOT, dir)));
  }
  for (const file of files) {
    hash.update(path.relative(ROOT, file));
    hash.update('\0');
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function linkCommand() {
  const bin = path.join(ROOT, 'node_modules', '.bin');
  if (!existsSync(bin)) return;
  const link = path.join(bin, 'docindex');
  rmSync(link, { force: true });
  symlinkSync(path.relative(bin, path.join(ROOT, 'bin', 'docindex.js')), link);
}

const ifStale = process.argv.includes('--if-stale');
const hash = sourcesHash();
const built = existsSync(STAMP) ? readFileSync(STAMP, 'utf8').trim() : '';
if (ifStale && built === hash) {
  linkCommand();
  process.exit(0);
}
if (ifStale) process.stderr.write('docindex: compiling (the sources changed since the last build)…\n');
const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const run = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.json')], {
  stdio: 'inherit',
});
if (run.status !== 0) {
  rmSync(STAMP, { force: true });
  process.exit(run.status ?? 1);
}
mkdirSync(path.dirname(STAMP), { recursive: true });
writeFileSync(STAMP, `${hash}\n`);
linkCommand();
