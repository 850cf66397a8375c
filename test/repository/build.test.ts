// `npm start` and `npm test` compile only when a source changed (scripts/build.mjs --if-stale),
// and the build links `docindex` into node_modules/.bin so `npx docindex` runs this checkout.
// Tried on a small project of its own, with the real TypeScript compiler.
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { runCommand } from '../helpers/process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'docindex-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(file: string, text: string): void {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), text);
}

async function build(...args: string[]) {
  const run = await runCommand(process.execPath, [path.join(dir, 'scripts', 'build.mjs'), ...args], {
    timeoutMs: 120_000,
  });
  return { status: run.status, stderr: run.stderr };
}

it('compiles when a source changed, and only then; links the command', async () => {
  mkdirSync(path.join(dir, 'scripts'));
  copyFileSync(path.join(ROOT, 'scripts', 'build.mjs'), path.join(dir, 'scripts', 'build.mjs'));
  mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules', 'typescript'), path.join(dir, 'node_modules', 'typescript'));
  write('package.json', '{"type":"module"}');
  write(
    'tsconfig.json',
    '{"compilerOptions":{"outDir":"dist","rootDir":".","module":"NodeNext","strict":true},"include":["src/**/*.ts"]}',
  );
  write('bin/docindex.js', '');
  write('src/a.ts', 'export const a: number = 1;\n');
  const out = path.join(dir, 'dist', 'src', 'a.js');

  expect(await build('--if-stale')).toMatchObject({
    status: 0,
    stderr: expect.stringContaining('compiling'),
  });
  const first = statSync(out).mtimeMs;
  expect(readlinkSync(path.join(dir, 'node_modules', '.bin', 'docindex'))).toBe('../../bin/docindex.js');

  expect(await build('--if-stale')).toEqual({ status: 0, stderr: '' });
  expect(statSync(out).mtimeMs).toBe(first);

  write('src/a.ts', 'export const a: number = 2;\n');
  expect(await build('--if-stale')).toMatchObject({
    status: 0,
    stderr: expect.stringContaining('compiling'),
  });
  expect(statSync(out).mtimeMs).toBeGreaterThan(first);

  // A failed compile leaves no stamp: the next start compiles again rather than run stale code.
  write('src/a.ts', 'export const a: number = "two";\n');
  expect((await build('--if-stale')).status).not.toBe(0);
  write('src/a.ts', 'export const a: number = 2;\n');
  expect((await build('--if-stale')).stderr).toContain('compiling');
}, 120_000);
