// What the commands draw on a terminal: the documents, organisations and keys tables, query hits,
// the usage chart and the self-overwriting progress line. Pure text, apart from ProgressLine's writes.
import type { AdminKey, AdminOrg, DocumentRecord, QueryResult, UsageReport } from '../client/types.js';

/** Where the commands write; process.stdout/stderr unless a caller passes others. */
export interface TerminalIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/** The name a person knows a document by: its file, URL, or title. */
export function documentName(doc: Pick<DocumentRecord, 'source' | 'metadata'>): string {
  return doc.source.filename ?? doc.source.url ?? doc.metadata.filename ?? doc.metadata.title ?? '(text)';
}

/** One row per document; the ERROR column only when a document has failed. */
export function renderDocumentTable(docs: DocumentRecord[]): string {
  const rows = docs.map((doc) => [
    doc.id,
    doc.status,
    minuteOf(doc.created_at),
    doc.chunk_count === null ? '-' : String(doc.chunk_count),
    documentName(doc),
    doc.error ? `${doc.error.code}: ${doc.error.message}` : '',
  ]);
  const header = ['ID', 'STATUS', 'CREATED (UTC)', 'CHUNKS', 'SOURCE', 'ERROR'];
  const showError = rows.some((row) => row[5] !== '');
  return renderTable([header, ...rows].map((row) => (showError ? row : row.slice(0, 5))));
}

/** "2026-03-15 12:00" from an ISO 8601 date-time (UTC). */
function minuteOf(iso: string): string {
  return iso.slice(0, 16).replace('T', ' ');
}

/** One row per organisation, as `docindex orgs list` prints them. */
export function renderOrgTable(orgs: AdminOrg[]): string {
  const days = orgs[0]?.usage.period_days ?? 30;
  const rows = orgs.map((org) => [
    org.org_id,
    org.name,
    String(org.rate_limit_rpm),
    String(org.active_keys),
    String(org.usage.total_queries),
    minuteOf(org.created_at),
  ]);
  const header = [
    'ORG ID',
    'NAME',
    'RATE LIMIT (RPM)',
    'ACTIVE KEYS',
    `QUERIES (${days} D)`,
    'CREATED (UTC)',
  ];
  return renderTable([header, ...rows]);
}

/** One row per key, as `docindex keys list` prints them: never the key, only its first characters. */
export function renderKeyTable(keys: AdminKey[], now: Date): string {
  const rows = keys.map((key) => {
    const state =
      key.revoked_at !== null
        ? `revoked ${minuteOf(key.revoked_at)}`
        : key.expires_at !== null && Date.parse(key.expires_at) <= now.getTime()
          ? 'expired'
          : 'active';
    return [
      key.key_id,
      `${key.prefix}…`,
      key.scopes.join(','),
      key.expires_at === null ? 'never' : minuteOf(key.expires_at),
      minuteOf(key.created_at),
      state,
    ];
  });
  const header = ['KEY ID', 'KEY', 'SCOPES', 'EXPIRES (UTC)', 'CREATED (UTC)', 'STATE'];
  return renderTable([header, ...rows]);
}

/** Rows of cells as aligned columns two spaces apart (the first row is the header). */
export function renderTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return `${rows
    .map((row) =>
      row
        .map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** Ranked hits with where they come from and an excerpt wrapped to `width` columns. */
export function renderQueryResults(
  results: QueryResult[],
  names: Map<string, string>,
  width: number,
): string {
  const out: string[] = [];
  results.forEach((hit, index) => {
    const pages =
      hit.page_start === null
        ? null
        : hit.page_end !== null && hit.page_end !== hit.page_start
          ? `pages ${hit.page_start}–${hit.page_end}`
          : `page ${hit.page_start}`;
    const where = [names.get(hit.document_id) ?? hit.document_id, pages, `chunk ${hit.chunk_index}`]
      .filter((part) => part !== null)
      .join(' · ');
    out.push(`${String(index + 1).padStart(2)}. ${where}  (score ${hit.score.toFixed(3)})`);
    out.push(`    document ${hit.document_id}`);
    const text = hit.text.replace(/\s+/g, ' ').trim();
    const excerpt = text.length > 480 ? `${text.slice(0, 479)}…` : text;
    for (const line of wrap(excerpt, width - 4)) out.push(`    ${line}`);
    out.push('');
  });
  return out.join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line.length > 0 && line.length + 1 + word.length > width) {
      lines.push(line);
      line = '';
    }
    line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

const EIGHTHS = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/** A bar chart of queries per day, oldest on the left and today on the right, then the totals. */
export function renderUsage(report: UsageReport, rows = 8): string {
  const days = [...report.daily].reverse();
  const max = Math.max(1, ...days.map((day) => day.count));
  const eighths = days.map((day) =>
    day.count === 0 ? 0 : Math.max(1, Math.round((day.count / max) * rows * 8)),
  );
  const labelWidth = String(max).length;
  const lines = [`Queries per day, last ${report.period_days} days (UTC)`, ''];
  for (let row = rows - 1; row >= 0; row--) {
    const label =
      row === rows - 1
        ? String(max)
        : row === Math.floor((rows - 1) / 2) && max >= 4
          ? String(Math.round(max / 2))
          : '';
    const cells = eighths.map((e) => EIGHTHS[Math.min(8, Math.max(0, e - row * 8))]!).join(' ');
    lines.push(`${label.padStart(labelWidth)} ┤ ${cells}`.trimEnd());
  }
  lines.push(`${'0'.padStart(labelWidth)} ┼${'─'.repeat(days.length * 2)}`);
  const first = days[0]?.date.slice(5) ?? '';
  const last = days.at(-1)?.date.slice(5) ?? '';
  const axisWidth = days.length * 2 - 1;
  lines.push(
    `${' '.repeat(labelWidth + 3)}${first}${' '.repeat(Math.max(1, axisWidth - first.length - last.length))}${last}`,
  );
  const today = report.daily[0]?.count ?? 0;
  lines.push(
    '',
    `Total queries (${report.period_days} days): ${report.total_queries.toLocaleString('en-US')}   today: ${today.toLocaleString('en-US')}`,
    `Rate limit: ${report.rate_limit_rpm.toLocaleString('en-US')} requests per minute`,
  );
  const partitions = report.partitions ?? [];
  if (partitions.length > 0) {
    const width = Math.max(...partitions.map((p) => p.partition.length));
    lines.push('', 'By partition:');
    for (const p of partitions) {
      lines.push(`  ${p.partition.padEnd(width)}  ${p.total_queries.toLocaleString('en-US')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** One self-overwriting status line on a TTY (redrawn at most ~10 times a second); silent otherwise. */
export class ProgressLine {
  #last = 0;
  #pending: string | null = null;
  #shown = false;
  constructor(private readonly stream: TerminalIO['stderr']) {}

  update(text: string): void {
    if (!this.stream.isTTY) return;
    this.#pending = text;
    const now = Date.now();
    if (now - this.#last < 100) return;
    this.#draw(now);
  }

  done(): void {
    if (!this.stream.isTTY) return;
    if (this.#pending !== null) this.#draw(Date.now());
    if (this.#shown) this.stream.write('\n');
    this.#shown = false;
  }

  /** Erases the line, so that what is written next takes its place. */
  clear(): void {
    if (!this.stream.isTTY) return;
    if (this.#shown) this.stream.write('\r\x1b[2K');
    this.#pending = null;
    this.#shown = false;
  }

  #draw(now: number): void {
    const width = (this.stream.columns ?? 80) - 1;
    const text = this.#pending ?? '';
    this.stream.write(`\r\x1b[2K${text.length > width ? text.slice(0, width) : text}`);
    this.#pending = null;
    this.#last = now;
    this.#shown = true;
  }
}

/** `[████░░░░]`: `fraction` of `width` cells filled. */
export function bar(fraction: number, width: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}
