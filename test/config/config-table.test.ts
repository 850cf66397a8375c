// The configuration table of docs/CONFIGURATION.md is written from the schema (`npm run
// docs:config`): this fails when someone edits one and not the other.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_TABLE_PAGE,
  renderConfigTable,
  TABLE_END,
  TABLE_START,
  withConfigTable,
} from '../../src/config/config-table.js';
import { VARIABLES } from '../../src/config/schema.js';

const PAGE = readFileSync(fileURLToPath(new URL(`../../${CONFIG_TABLE_PAGE}`, import.meta.url)), 'utf8');

describe('the configuration table', () => {
  it('is the one the schema produces (run `npm run docs:config` to rewrite it)', () => {
    const between = PAGE.slice(PAGE.indexOf(TABLE_START) + TABLE_START.length, PAGE.indexOf(TABLE_END));
    expect(between.trim()).toBe(renderConfigTable());
    expect(withConfigTable(PAGE)).toBe(PAGE);
  });

  it('has one row per variable, with its default', () => {
    const table = renderConfigTable();
    expect(table.split('\n')).toHaveLength(Object.keys(VARIABLES).length + 2);
    expect(table).toContain('| `MAX_UPLOAD_BYTES` | `104857600` | file upload and URL download limit |');
    expect(table).toContain('| `EXTRACT_WORKERS` | CPUs − 1 (at least 1) |');
    expect(table).toContain('| `REDIS_URL` | — |');
  });

  it('docs:config replaces only what lies between the markers', () => {
    const stale = `# Title\n\n${TABLE_START}\n| variable | default | meaning |\n| \`HOST\` | old |\n${TABLE_END}\n\nAfter.\n`;
    expect(withConfigTable(stale)).toBe(
      `# Title\n\n${TABLE_START}\n${renderConfigTable()}\n${TABLE_END}\n\nAfter.\n`,
    );
    expect(() => withConfigTable('# no markers\n')).toThrow(/config:start/);
  });
});
