// The configuration table of docs/CONFIGURATION.md, written from the variables in schema.ts (each
// area's declared in variables/).
// `npm run docs:config` puts it between the markers in that page; test/config/config-table.test.ts
// fails when the page's copy differs.
import { VARIABLES } from './schema.js';
import type { Variable } from './variable.js';

export const TABLE_START = '<!-- config:start -->';
export const TABLE_END = '<!-- config:end -->';

function defaultColumn(variable: Variable): string {
  if (variable.defaultText !== undefined) return variable.defaultText;
  if (variable.type === 'url' || variable.type === 'list') return '—';
  if (typeof variable.default === 'function') {
    throw new Error(`${variable.env}: a computed default needs a defaultText for the configuration table`);
  }
  return `\`${variable.default}\``;
}

/** The Markdown table, one row per variable, in declaration order. */
export function renderConfigTable(): string {
  const rows = Object.values(VARIABLES as Record<string, Variable>).map(
    (variable) => `| \`${variable.env}\` | ${defaultColumn(variable)} | ${variable.description} |`,
  );
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The page where the table lives, from the repository's root. */
export const CONFIG_TABLE_PAGE = 'docs/CONFIGURATION.md';

/** `page` with the text between the markers replaced by the table. */
export function withConfigTable(page: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(
      `${CONFIG_TABLE_PAGE} needs the markers ${TABLE_START} and ${TABLE_END} around the configuration table`,
    );
  }
  return `${page.slice(0, start + TABLE_START.length)}\n${renderConfigTable()}\n${page.slice(end)}`;
}
