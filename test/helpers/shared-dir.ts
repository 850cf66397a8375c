// Where the shared corpus and benchmark collections are: `../shared` beside the repository, or
// DOCINDEX_TEST_SHARED_DIR (CI points it at a missing folder to run the suite as a clone on its
// own is, where every test that reads it must skip). No vitest here: a probe that runs under
// vite-node alone reads it too.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const SHARED_DIR = process.env.DOCINDEX_TEST_SHARED_DIR
  ? path.resolve(process.env.DOCINDEX_TEST_SHARED_DIR)
  : path.resolve(ROOT, '../shared');
export const CORPUS_DIR = path.join(SHARED_DIR, 'corpus');
export const HAVE_CORPUS = existsSync(CORPUS_DIR);
