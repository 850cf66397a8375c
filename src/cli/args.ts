// The command line's one argument parser (node:util parseArgs, strict) and the UsageError every
// command throws when its arguments are wrong: exit 2 and one line (exit.ts). An unknown option or
// command is named with the nearest known one.
import { parseArgs } from 'node:util';
import { ACCESS_MAX_PRINCIPALS, PRINCIPAL_MAX_LENGTH } from '../domain/principals.js';

/** The command line is wrong: one line and a pointer to --help, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

/** What parseArguments gives for options `T`: their values by name, and the positionals. */
export type Parsed<T extends OptionSpec> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
>;

/**
 * Options and positionals of `args`; an unknown option, a missing option value or (when
 * `positionalCount` is given) another number of positionals is a UsageError.
 */
export function parseArguments<T extends OptionSpec>(
  args: string[],
  options: T,
  positionalCount?: number,
): Parsed<T> {
  let parsed: Parsed<T>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(
      optionProblem(args, options) ?? (error instanceof Error ? error.message : String(error)),
    );
  }
  if (positionalCount !== undefined && parsed.positionals.length !== positionalCount) {
    throw new UsageError(`expected ${positionalCount} argument(s), got ${parsed.positionals.length}`);
  }
  return parsed;
}

/** `--flag N` read as a whole number in [min, max]; undefined when the flag is absent. */
export function wholeNumber(
  raw: string | undefined,
  flag: string,
  min: number,
  max: number,
): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/** Repeated `--flag key=value` options as pairs, in order. */
export function keyValues(pairs: string[] | undefined, flag: string): Array<[string, string]> {
  return (pairs ?? []).map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`${flag} takes key=value, got ${JSON.stringify(pair)}`);
    return [pair.slice(0, eq), pair.slice(eq + 1)];
  });
}

/**
 * What is wrong with the options in `args`, said as a user reads it (parseArgs's own messages
 * suggest shell quoting that is seldom the fix); null when they look right.
 */
function optionProblem(args: string[], options: OptionSpec): string | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') break;
    if (!arg.startsWith('-') || arg === '-') continue;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const spec = flag.startsWith('--') ? options[flag.slice(2)] : undefined;
    if (spec === undefined) {
      const known = Object.keys(options).map((name) => `--${name}`);
      return `unknown option ${flag}${didYouMean(flag, known)}`;
    }
    if (spec.type === 'boolean') {
      if (flag !== arg) return `${flag} takes no value, got ${JSON.stringify(arg)}`;
      continue;
    }
    if (flag !== arg) continue;
    const value = args[i + 1];
    if (value === undefined) return `${flag} needs a value`;
    if (value.startsWith('-')) {
      return `${flag} needs a value; to give one that starts with "-", write ${flag}=${value}`;
    }
    i++;
  }
  return null;
}

/** `; did you mean "x"?` for the nearest of `known` within a typo or two of `word`, else nothing. */
export function didYouMean(
  word: string,
  known: readonly string[],
  show: (name: string) => string = (name) => name,
): string {
  const nearest = closest(word, known);
  return nearest === null ? '' : `; did you mean ${show(nearest)}?`;
}

/** The entry of `known` nearest to `word` by edit distance, when close enough to be a typo. */
export function closest(word: string, known: readonly string[]): string | null {
  const limit = word.length <= 4 ? 1 : 2;
  let best: { name: string; distance: number } | null = null;
  for (const name of known) {
    const distance = editDistance(word, name);
    if (distance <= limit && (best === null || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}

/** Insertions, deletions, substitutions and swaps of neighbours (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      }
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/** `--access P` or `--principal P`, each a principal of 1 to PRINCIPAL_MAX_LENGTH characters. */
export function principalFlags(values: string[], flag: string): string[] {
  const bad = values.find((p) => p.length === 0 || p.length > PRINCIPAL_MAX_LENGTH);
  if (bad !== undefined) {
    throw new UsageError(
      `${flag} takes a principal of 1 to ${PRINCIPAL_MAX_LENGTH} characters, got ${JSON.stringify(bad)}`,
    );
  }
  if (values.length > ACCESS_MAX_PRINCIPALS)
    throw new UsageError(`${flag} may be given at most ${ACCESS_MAX_PRINCIPALS} times`);
  return [...new Set(values)];
}
