// Tests that read the shared corpus (`../shared` beside the repository: real PDFs and DOCX files
// made by other people's tools). A clone on its own has no `../shared`: those tests then skip and
// say so once. CI sets REQUIRE_SHARED_TESTS=1, and a missing corpus fails the run instead.
import { describe, it } from 'vitest';
import { CORPUS_DIR, HAVE_CORPUS } from './shared-dir.js';

export { CORPUS_DIR, HAVE_CORPUS, SHARED_DIR } from './shared-dir.js';

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
