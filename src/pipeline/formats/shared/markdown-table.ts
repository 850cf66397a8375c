// Tables as Markdown tables, for every format that has them (docx and html through the HTML walk,
// pptx, xlsx, odt, csv): a row per line, so the chunker can keep a row whole (a line starting with
// "|" is a boundary it prefers to the words inside a row), and a reader and a model both see the
// columns.

/** A table's rows as Markdown lines ('' for none); the first row is the header, as Markdown has no table without one. */
export function renderMarkdownTable(grid: readonly (readonly string[])[]): string {
  if (grid.length === 0) return '';
  // A loop, not Math.max(...): a spreadsheet's million rows would overflow the argument stack.
  let width = 0;
  for (const row of grid) width = Math.max(width, row.length);
  if (width === 0) return '';
  const line = (row: readonly string[]) =>
    `| ${Array.from({ length: width }, (_, i) => row[i] ?? '').join(' | ')} |`;
  return [line(grid[0]!), line(Array.from({ length: width }, () => '---')), ...grid.slice(1).map(line)].join(
    '\n',
  );
}

/**
 * A cell's text on one line, with the pipes that would end it escaped and NULs dropped (what
 * normalizeText would do: a table's text needs no second pass over it).
 */
export function markdownCell(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|').replaceAll('\u0000', '');
}
