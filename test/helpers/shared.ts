// Tests that read the shared corpus (`../shared` beside the repository: real PDFs and DOCX files
// made by other people's tools). A clone on its own has no `../shared`: those tests then skip and
// say so once. CI sets REQUIRE_SHARED_TESTS=1, and a missing corpus fails the run instead.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const SHARED_DIR = path.resolve(ROOT, '../shared');
export const CORPUS_DIR = path.join(SHARED_DIR, 'corpus');
export const HAVE_CORPUS = existsSync(CORPUS_DIR);

if (!HAVE_CORPUS && process.env.REQUIRE_SHARED_TESTS === '1') {
  throw new Error(`REQUIRE_SHARED_TESTS=1, but the shared corpus is not at ${CORPUS_DIR}`);
}

let told = false;
function tellSkipped(): void {
  if (HAVE_CORPUS || told) return;
  told = true;
  console.warn(
    `skipping the tests that read ${CORPUS_DIR}: it is not beside this clone ` +
      '(CI runs them, with REQUIRE_SHARED_TESTS=1)',
  );
}

/** `it`, skipped (and said so) when the shared corpus is absent. */
export const itWithCorpus = ((...args: Parameters<typeof it>) => {
  tellSkipped();
  return it.skipIf(!HAVE_CORPUS)(...args);
}) as typeof it;

/** `describe`, skipped (and said so) when the shared corpus is absent. */
export const describeWithCorpus = ((...args: Parameters<typeof describe>) => {
  tellSkipped();
  return describe.skipIf(!HAVE_CORPUS)(...args);
}) as typeof describe;
