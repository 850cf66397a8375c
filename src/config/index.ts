// The one place that reads process.env: reads every variable declared in schema.ts, checks it,
// and lists every bad one at once, so a misconfigured deployment fails with one clear message.
import path from 'node:path';
import type { Config } from './config.js';
import { RULES, VARIABLES } from './schema.js';
import type { Variable } from './variable.js';

export type { Config } from './config.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read: Partial<Record<keyof Config, unknown>> = {};
  for (const [key, variable] of Object.entries(VARIABLES) as Array<[keyof Config, Variable]>) {
    read[key] = readVariable(variable, env[variable.env], read as Partial<Config>, problems);
  }
  const config = read as Config;
  for (const rule of RULES) {
    const problem = rule(config);
    if (problem !== null) problems.push(problem);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** The variable's value (its default when unset or wrong); a wrong value adds to `problems`. */
function readVariable(
  variable: Variable,
  raw: string | undefined,
  read: Partial<Config>,
  problems: string[],
): unknown {
  const unset = raw === undefined || raw === '';
  const name = variable.env;
  switch (variable.type) {
    case 'int': {
      const fallback = typeof variable.default === 'function' ? variable.default(read) : variable.default;
      if (unset) return fallback;
      if (!/^\d+$/.test(raw.trim())) {
        problems.push(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
        return fallback;
      }
      const value = Number(raw.trim());
      if (value < variable.min || value > variable.max) {
        problems.push(`${name} must be between ${variable.min} and ${variable.max}, got ${value}`);
        return fallback;
      }
      return value;
    }
    case 'string': {
      const fallback = typeof variable.default === 'function' ? variable.default(read) : variable.default;
      const value = unset ? fallback : raw;
      if (variable.pattern && !variable.pattern.test.test(value)) problems.push(variable.pattern.invalid);
      if (variable.oneOf && !variable.oneOf.includes(value)) {
        problems.push(`${name} must be one of ${variable.oneOf.join(', ')}, got ${JSON.stringify(value)}`);
      }
      return variable.path ? path.resolve(value) : value;
    }
    case 'url':
      if (unset) return null;
      if (!variable.scheme.test(raw)) problems.push(variable.invalid);
      return raw;
    case 'bool':
      if (unset) return variable.default;
      if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
      if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
      problems.push(`${name} must be true or false, got ${JSON.stringify(raw)}`);
      return variable.default;
    case 'list':
      return (raw ?? '')
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0);
  }
}
