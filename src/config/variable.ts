// The kinds of environment variable (a whole number, text, a URL, a flag, a list), what each
// declares besides its name (default, limits, the configuration table's sentence), and the table
// type that ties each Config field to the kind its type calls for.
import type { Config } from './config.js';

interface Described {
  /** The environment variable. */
  env: string;
  /** The configuration table's "meaning" column (Markdown). */
  description: string;
  /** The configuration table's "default" column when the default is not a plain value (Markdown). */
  defaultText?: string;
}

/** A whole number within [min, max]. */
export interface IntVariable extends Described {
  type: 'int';
  /** A function when the default depends on the machine or on variables read before this one. */
  default: number | ((read: Partial<Config>) => number);
  min: number;
  max: number;
}

/** Text; empty means unset. */
export interface StringVariable extends Described {
  type: 'string';
  /** A function when the default depends on variables read before this one. */
  default: string | ((read: Partial<Config>) => string);
  /** A file-system path, made absolute against the working directory. */
  path?: boolean;
  /** The value must match, or `invalid` is the problem reported. */
  pattern?: { test: RegExp; invalid: string };
  /** The value must be one of these. */
  oneOf?: readonly string[];
}

/** An optional URL (null when unset) whose scheme must match. */
export interface UrlVariable extends Described {
  type: 'url';
  scheme: RegExp;
  invalid: string;
}

/** true/yes/1 or false/no/0, in any case. */
export interface BoolVariable extends Described {
  type: 'bool';
  default: boolean;
}

/** A comma-separated list; blank items are dropped. Unset is the empty list. */
export interface ListVariable extends Described {
  type: 'list';
}

export type Variable = IntVariable | StringVariable | UrlVariable | BoolVariable | ListVariable;

/** The kind of variable each Config field can be, so a field cannot be declared with the wrong type. */
export type VariableFor<T> = [T] extends [number]
  ? IntVariable
  : [T] extends [boolean]
    ? BoolVariable
    : [T] extends [string[]]
      ? ListVariable
      : [T] extends [string]
        ? StringVariable
        : UrlVariable;

/** Every Config field's variable: VARIABLES in schema.ts has this type, each area's group a part of it. */
export type VariableTable = { [K in keyof Config]: VariableFor<Config[K]> };
