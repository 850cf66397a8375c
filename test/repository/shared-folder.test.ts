// A clone on its own has no ../shared. Tests reach it only through test/helpers/shared-dir.ts, so
// CI can run them once as such a clone (DOCINDEX_TEST_SHARED_DIR pointing nowhere) and they skip.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const TEST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const GATE = path.join(TEST_DIR, 'helpers', 'shared-dir.ts');

it('reaches the shared folder only through helpers/shared-dir.ts', () => {
  const files = readdirSync(TEST_DIR, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(TEST_DIR, f));
  expect(files.length).toBeGreaterThan(50);
  const reaching = files.filter((file) => {
    if (file === GATE) return false;
    const code = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\/\/|\*)/.test(line));
    return code.some((line) => /\.\.\/shared\b|\bshared\/(corpus|benchmarks|spec)\b/.test(line));
  });
  expect(reaching.map((f) => path.relative(TEST_DIR, f))).toEqual([]);
});
