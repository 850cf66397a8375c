// A test worker that waits on a synchronous child process holds its event loop, and a loop held
// for a minute (a slow compile or OCR on a loaded machine) loses the worker's link to the test
// runner: the run then fails with "Timeout calling onTaskUpdate" although every test passed.
// Tests run children with runCommand (test/helpers/process.ts); a synchronous call is kept only
// as a one-line probe of whether a tool exists, which returns at once.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const THIS_FILE = fileURLToPath(import.meta.url);
const TEST_DIR = path.resolve(path.dirname(THIS_FILE), '..');
const SYNC_CALL = /\b(spawnSync|execFileSync|execSync)\(/;
const PROBE = /\.status === 0|'--version'|\]\)\.pid\b/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}

it('no test waits on a child process synchronously, but for one-line probes', () => {
  const offenders = sources(TEST_DIR)
    .filter((file) => file !== THIS_FILE)
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          SYNC_CALL.test(line) && !PROBE.test(line) && !line.trimStart().startsWith('*')
            ? [`${path.relative(TEST_DIR, file)}:${index + 1}: ${line.trim()}`]
            : [],
        ),
    );
  expect(offenders).toEqual([]);
});

it('catches a synchronous run and spares a probe', () => {
  const caught = "const run = spawnSync('unshare', ['-rn', 'sh'], { timeout: 600_000 });";
  const spared = "const canUnshare = spawnSync('unshare', ['-rn', 'true']).status === 0;";
  expect(SYNC_CALL.test(caught) && !PROBE.test(caught)).toBe(true);
  expect(SYNC_CALL.test(spared) && !PROBE.test(spared)).toBe(false);
});
