// The figures of a bench/RESULTS.md section, read back from its markdown tables, and the paired
// comparison of two commits' runs. Reading the rendered tables (rather than a structured output)
// lets an old commit's benchmarks, written before any structured output existed, take part.

/** One number of a section: a table cell, named by its row's first cell and its column header. */
export interface Figure {
  name: string;
  value: number;
}

const NUMBER = /[-−]?\d[\d,]*(?:\.\d+)?/;
/** A cell that is a figure: it starts with a number (a comparison or "about" sign before it allowed). */
const LEADING_NUMBER = /^[~≈≤≥<>]?\s*[-−]?\d/;
const SEPARATOR = /^\|(?:\s*:?-{2,}:?\s*\|)+\s*$/;
const MARKER = /^<!-- bench:([a-z0-9-]+) -->$/;

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());
}

/** Markdown emphasis and code marks off, so `**2.1×**` reads as 2.1 and names stay plain. */
function plain(text: string): string {
  return text.replace(/[*_`]/g, '').trim();
}

/** The first number of a cell (thousands separators allowed), or null when it has none. */
export function cellNumber(cell: string): number | null {
  const match = NUMBER.exec(plain(cell));
  if (!match) return null;
  const value = Number(match[0].replace(/,/g, '').replace('−', '-'));
  return Number.isFinite(value) ? value : null;
}

/**
 * Every numeric cell of every table in `text`. A figure is named `row · column`, the row by its
 * leading text cells; a name that comes back (two tables with the same rows) gets ` (2)`, ` (3)`…
 * in the order the tables come.
 */
export function readFigures(text: string): Figure[] {
  const lines = text.split('\n');
  const figures: Figure[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i + 1 < lines.length; i++) {
    const header = lines[i]!.trim();
    if (!header.startsWith('|') || !SEPARATOR.test(lines[i + 1]!.trim())) continue;
    const columns = cells(header).map(plain);
    let row = i + 2;
    for (; row < lines.length && lines[row]!.trim().startsWith('|'); row++) {
      const values = cells(lines[row]!);
      // The row's name: its first cell and the text cells after it, up to the first that starts
      // with a number ("| threads kept running | after 100 documents | 208.2 |").
      let first = 1;
      while (first < values.length && !LEADING_NUMBER.test(plain(values[first]!))) first++;
      const label = values.slice(0, first).map(plain).join(' · ');
      for (let c = first; c < values.length && c < columns.length; c++) {
        const value = cellNumber(values[c]!);
        if (value === null) continue;
        const base = `${label} · ${columns[c]}`;
        const count = (seen.get(base) ?? 0) + 1;
        seen.set(base, count);
        figures.push({ name: count === 1 ? base : `${base} (${count})`, value });
      }
    }
    i = row - 1;
  }
  return figures;
}

/** The sections of a RESULTS.md by their `<!-- bench:id -->` marker. */
export function readSections(text: string): Map<string, string> {
  const sections = new Map<string, string>();
  let id: string | null = null;
  let lines: string[] = [];
  const flush = () => {
    if (id !== null) sections.set(id, lines.join('\n'));
  };
  for (const line of text.split('\n')) {
    const match = MARKER.exec(line.trim());
    if (match) {
      flush();
      id = match[1]!;
      lines = [];
    } else {
      lines.push(line);
    }
  }
  flush();
  return sections;
}

/** What one section's run said, for each round: its figures by name (empty when it failed). */
export type Rounds = Array<Map<string, number>>;

export interface Comparison {
  name: string;
  medianA: number;
  medianB: number;
  /** medianB / medianA; null when A's median is 0. */
  ratio: number | null;
  /** Smallest and largest B/A of the rounds where both ran (null when none could be paired). */
  spread: [number, number] | null;
  /** Rounds in which both commits gave this figure. */
  pairs: number;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Figures both commits gave, in the order A's first round gave them: medians over the rounds each
 * gave it, the ratio of the medians, and the spread of the ratios of runs of the same round.
 */
export function compare(a: Rounds, b: Rounds): Comparison[] {
  const names: string[] = [];
  for (const round of [...a, ...b]) {
    for (const name of round.keys()) if (!names.includes(name)) names.push(name);
  }
  const out: Comparison[] = [];
  for (const name of names) {
    const valuesA = a.flatMap((round) => (round.has(name) ? [round.get(name)!] : []));
    const valuesB = b.flatMap((round) => (round.has(name) ? [round.get(name)!] : []));
    if (valuesA.length === 0 || valuesB.length === 0) continue;
    const ratios: number[] = [];
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const x = a[i]!.get(name);
      const y = b[i]!.get(name);
      if (x !== undefined && y !== undefined && x !== 0) ratios.push(y / x);
    }
    const medianA = median(valuesA);
    const medianB = median(valuesB);
    out.push({
      name,
      medianA,
      medianB,
      ratio: medianA === 0 ? null : medianB / medianA,
      spread: ratios.length === 0 ? null : [Math.min(...ratios), Math.max(...ratios)],
      pairs: ratios.length,
    });
  }
  return out;
}

function number(n: number): string {
  const digits = Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2;
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function ratio(n: number | null): string {
  return n === null ? '—' : `${n.toFixed(3)}×`;
}

/** A markdown table of one section's comparison. */
export function renderComparison(rows: Comparison[], labelA: string, labelB: string): string[] {
  if (rows.length === 0) return ['(no figure that both commits gave)'];
  return [
    `| figure | ${labelA} (median) | ${labelB} (median) | B/A | paired B/A, min–max | pairs |`,
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map((row) => {
      const spread = row.spread === null ? '—' : `${ratio(row.spread[0])}–${ratio(row.spread[1])}`;
      const name = row.name.replace(/\|/g, '\\|');
      return `| ${name} | ${number(row.medianA)} | ${number(row.medianB)} | ${ratio(row.ratio)} | ${spread} | ${row.pairs} |`;
    }),
  ];
}
