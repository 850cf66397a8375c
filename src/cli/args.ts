// The command line's one argument parser (node:util parseArgs, strict) and the UsageError every
// command throws when its arguments are wrong: exit 2, the message and the usage text (exit.ts).
import { parseArgs } from 'node:util';

/** The command line is wrong: the message and the usage text, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

type Parsed<T extends OptionSpec> = ReturnType<
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
    throw new UsageError(error instanceof Error ? error.message : String(error));
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
