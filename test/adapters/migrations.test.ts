// The migrations of both backends, assembled from their folders by each index: versions strictly
// ascending, and the statements of every shipped version exactly as they shipped. A database that
// recorded a version never runs it again, so editing a shipped migration would leave databases in
// the field on another schema than new ones: a change goes in a new version instead. A new version
// is pinned here by its line, which this test prints when it is missing.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PgDatabase, Queryable } from '../../src/adapters/postgres/database.js';
import { MIGRATIONS as PG_MIGRATIONS } from '../../src/adapters/postgres/migrations/index.js';
import { PG_SCHEMA_VERSION, PG_SCHEMA_VERSIONS } from '../../src/adapters/postgres/migrations.js';
import { SQLITE_SCHEMA_VERSION, SQLITE_SCHEMA_VERSIONS } from '../../src/adapters/sqlite/database.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/adapters/sqlite/migrations/index.js';

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/**
 * What a PostgreSQL migration sends, through a connection that records each statement: run once
 * with every probe answering "found" (extensions installed, tables filled) and once with every
 * probe answering "none", with RUM allowed and not, so both sides of each branch are seen.
 */
async function pgStatements(version: number): Promise<string> {
  const migration = PG_MIGRATIONS.find((m) => m.version === version)!;
  const sent: string[] = [];
  for (const rowCount of [0, 1]) {
    for (const rum of [true, false]) {
      const tx = {
        query: async (sql: string, params?: unknown[]) => {
          sent.push(JSON.stringify([sql, params ?? null]));
          return { rowCount, rows: [] };
        },
      } as unknown as Queryable;
      const db = { schema: 's', quotedSchema: '"s"', table: (name: string) => `"s"."${name}"` };
      await migration.apply(tx, db as unknown as PgDatabase, { rum });
    }
  }
  return sent.join('\n');
}

/** Each shipped SQLite version: the first 16 hex digits of the SHA-256 of its statements. */
const SQLITE_SHIPPED: Record<number, string> = {
  1: 'e02f9bb96483da06',
  2: '08e790a0062fbcbc',
  3: 'ece976e3f17c888e',
  4: '0fab9aa734bc9a07',
  5: '773bb834f8369b46',
  6: '58cb95a75bc3ad61',
  7: '4fa7ab175c0747cf',
  10: 'abc9851608a78ec0',
  20: 'c11c169f7b56be67',
  30: '181decd0141abfc6',
  31: '77d1486dd9a81120',
  40: 'a9b022ab95ee902f',
  70: '15fec1c7a2217817',
  90: '163f01d74dce0da5',
  120: '6e638aeb8cf7db3a',
  125: '1b9086a992ab2131',
  135: 'a1700a5091deec1d',
  140: '3d6dd89fc653d9c5',
  150: 'b24d37fd65d9a640',
  155: 'f05cc1c993d678b6',
  156: '05650b86b8e81c33',
  160: '2bc3267ea422c40b',
  165: 'cea4a50963a57420',
  170: '51bb501da42f04f7',
  175: 'b97fc31030ea6a99',
  180: '7eba9506adf85520',
  185: '29a361edb8f9c64b',
  186: '5f82c7d66aefa030',
  190: '05f53e78d901e884',
};

/** Each shipped PostgreSQL version: the same digest of what pgStatements records. */
const PG_SHIPPED: Record<number, string> = {
  1: 'cd871d917aca745d',
  2: '9d27ec181b66c1b3',
  3: 'f86b4c020d621cbd',
  4: 'f6ad40fab0cb6dc8',
  10: '7ac521198e7e7291',
  20: '725404bd7ad39f7c',
  30: '7b5ebf5216c1a3b9',
  31: 'e40f4db2dda4b93f',
  40: '8072e8738ba04d79',
  60: 'b74016ebd38b152b',
  70: '5a4bf41a9668d743',
  90: '07bfa373806f3e1f',
  100: 'a131aa778dee4ad6',
  110: 'e85cb9a0438e215a',
  120: 'cc6ce8037198db01',
  125: 'a249ab365b710d34',
  130: 'cf28ed61e48c2234',
  135: 'fe1078634d53a80f',
  140: 'a26051f2fce3ee6b',
  150: '5d0a6600a62e4bb0',
  155: 'f4aa735b333ae2e7',
  156: '03f88a14bd1d4394',
  160: '4db842201de83fc3',
  165: '11aefd69fc6386f8',
  170: '071f59e3c446b6e5',
  175: '0b4574c36040bdac',
  180: '930fa863c27cb3ab',
  185: 'abda26a2d4524ccc',
  186: '55ed261d14049cab',
  190: 'e3b7a5a470e7f1e4',
};

function pinned(shipped: Record<number, string>, found: Record<number, string>): void {
  const missing = Object.keys(found)
    .filter((v) => !(v in shipped))
    .map((v) => `  ${v}: '${found[Number(v)]}',`);
  expect(missing, `pin the new versions in this file:\n${missing.join('\n')}`).toEqual([]);
  expect(found).toEqual(shipped);
}

describe('migrations', () => {
  it('SQLite: versions strictly ascending, the newest one the schema version', () => {
    const versions = SQLITE_MIGRATIONS.map((m) => m.version);
    expect(versions.every((v, i) => i === 0 || v > versions[i - 1]!)).toBe(true);
    expect(versions).toEqual(SQLITE_SCHEMA_VERSIONS);
    expect(versions.at(-1)).toBe(SQLITE_SCHEMA_VERSION);
  });

  it('PostgreSQL: versions strictly ascending, the newest one the schema version', () => {
    const versions = PG_MIGRATIONS.map((m) => m.version);
    expect(versions.every((v, i) => i === 0 || v > versions[i - 1]!)).toBe(true);
    expect(versions).toEqual(PG_SCHEMA_VERSIONS);
    expect(versions.at(-1)).toBe(PG_SCHEMA_VERSION);
  });

  it('SQLite: every shipped migration runs the statements it shipped with', () => {
    pinned(SQLITE_SHIPPED, Object.fromEntries(SQLITE_MIGRATIONS.map((m) => [m.version, digest(m.sql)])));
  });

  it('PostgreSQL: every shipped migration sends the statements it shipped with', async () => {
    const found: Record<number, string> = {};
    for (const m of PG_MIGRATIONS) found[m.version] = digest(await pgStatements(m.version));
    pinned(PG_SHIPPED, found);
  });
});
