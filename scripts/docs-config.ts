// `npm run docs:config`: rewrites the configuration table of docs/CONFIGURATION.md from the
// variables of src/config/variables/, gathered in src/config/schema.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONFIG_TABLE_PAGE, withConfigTable } from '../src/config/config-table.js';

// Compiled to dist/scripts/, two folders below the repository.
const PAGE = fileURLToPath(new URL(`../../${CONFIG_TABLE_PAGE}`, import.meta.url));

const before = readFileSync(PAGE, 'utf8');
const after = withConfigTable(before);
if (after === before) {
  process.stdout.write(`${CONFIG_TABLE_PAGE}: the configuration table is up to date\n`);
} else {
  writeFileSync(PAGE, after);
  process.stdout.write(`${CONFIG_TABLE_PAGE}: configuration table rewritten\n`);
}
