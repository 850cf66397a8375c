// A SQLite migration: its version, its name, and the statements database.ts runs for it.
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
