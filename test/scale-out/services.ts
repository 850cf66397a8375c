// Which backing services the scale-out tests may use. A URL that is not set skips the suite and
// says so on the console; with REQUIRE_SCALE_OUT_TESTS=1 (CI) a missing or unreachable service
// fails instead, so the scale-out tests can never silently not run there. A URL that is set but
// unreachable fails in any case: someone asked for those tests.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, it } from 'vitest';

export const REQUIRED = process.env.REQUIRE_SCALE_OUT_TESTS === '1';

export type ServiceName = 'DATABASE_URL' | 'REDIS_URL';

export interface ServiceStatus {
  /** The URLs, when every requested service is set and answered. */
  urls: Partial<Record<ServiceName, string>>;
  /** Why the suite cannot run, or null when it can. */
  problem: string | null;
}

async function probePostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => {});
  }
}

async function probeRedis(url: string): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } finally {
    client.disconnect();
  }
}

/** Checks the services a suite needs: set, and answering. */
export async function checkServices(names: ServiceName[]): Promise<ServiceStatus> {
  const urls: Partial<Record<ServiceName, string>> = {};
  for (const name of names) {
    // The embedded vitest project blanks DATABASE_URL/REDIS_URL for everything else it runs and
    // hands the scale-out suites the URLs under these names.
    const url = process.env[`SCALE_OUT_${name}`] || process.env[name];
    if (!url) return { urls: {}, problem: `${name} not set` };
    try {
      await (name === 'DATABASE_URL' ? probePostgres(url) : probeRedis(url));
    } catch (error) {
      return {
        urls: {},
        problem: `${name} is set but unreachable (${error instanceof Error ? error.message : String(error)})`,
      };
    }
    urls[name] = url;
  }
  return { urls, problem: null };
}

/**
 * Runs `body` as the suite `title` when the services are there. Otherwise: a URL that is not set
 * skips it with a console line (or fails it under REQUIRE_SCALE_OUT_TESTS=1); an unreachable
 * service fails it with the reason.
 */
export function describeScaleOut(title: string, status: ServiceStatus, body: () => void): void {
  if (status.problem === null) {
    describe(title, body);
    return;
  }
  const notSet = status.problem.endsWith('not set');
  if (notSet && !REQUIRED) {
    console.warn(`scale-out tests skipped: ${status.problem} (${title})`);
    describe.skip(title, body);
    return;
  }
  describe(title, () => {
    it('has its backing services', () => {
      throw new Error(
        `${title}: ${status.problem}${REQUIRED ? ' — REQUIRE_SCALE_OUT_TESTS=1 forbids skipping' : ''}`,
      );
    });
  });
}

/** A schema name of its own for one test: `t_` and 16 hex digits. */
export function freshSchema(): string {
  return `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

/** A Redis key prefix of its own for one test. */
export function freshPrefix(): string {
  return `test-${randomUUID()}`;
}

/** Drops a schema and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Deletes every Redis key under `prefix:`. */
export async function deleteRedisPrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
