// `npm run docs:config`: rewrites README.md's configuration table from src/config/schema.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withConfigTable } from '../src/config/readme-table.js';

// Compiled to dist/scripts/, two folders below the repository.
const README = fileURLToPath(new URL('../../README.md', import.meta.url));

const before = readFileSync(README, 'utf8');
const after = withConfigTable(before);
if (after === before) {
  process.stdout.write('README.md: the configuration table is up to date\n');
} else {
  writeFileSync(README, after);
  process.stdout.write('README.md: configuration table rewritten\n');
}
