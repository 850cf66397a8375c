// A scale-out deployment of real processes for one test file: a fresh PostgreSQL schema and Redis
// prefix, one blob folder shared by every process (as a shared volume would be) or, `isolated`,
// an empty folder of each process's own (as on separate machines), migrated, with
// `serve --no-worker` APIs and `docindex worker` processes started together (concurrent start-up
// must be safe) and everything removed afterwards. Call it inside a describeScaleOut body.
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import {
  runCli,
  type ServerProcess,
  startServer,
  startWorker,
  stopChild,
  stopServer,
  type WorkerProcess,
} from '../helpers/process.js';
import { deleteRedisPrefix, dropSchema, freshPrefix, freshSchema, type ServiceStatus } from './services.js';

export class Deployment {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly schema = freshSchema();
  readonly prefix = freshPrefix();
  readonly env: Record<string, string>;
  readonly apis: ServerProcess[] = [];
  /** Started workers; a test that kills one replaces it here. */
  readonly workers: WorkerProcess[] = [];
  /** A small pool on the deployment's database, open from beforeAll to afterAll. */
  db!: pg.Pool;
  /** A connection to the deployment's Redis, open from beforeAll to afterAll. */
  redis!: Redis;
  /** With `isolated`: every process's own DATA_DIR (its BLOB_DIR is `<dir>/blobs`). */
  readonly processDirs: string[] = [];
  /** Where the deployment's folders are made; set in beforeAll. */
  work = '';

  constructor(
    services: ServiceStatus,
    extraEnv: Record<string, string>,
    private readonly isolated = false,
  ) {
    this.databaseUrl = services.urls.DATABASE_URL ?? '';
    this.redisUrl = services.urls.REDIS_URL ?? '';
    this.env = {
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: this.redisUrl,
      DATABASE_SCHEMA: this.schema,
      REDIS_PREFIX: this.prefix,
      // Short leases: a killed worker's jobs come back within seconds.
      JOB_LEASE_MS: '3000',
      EXTRACT_WORKERS: '1',
      DEFAULT_RATE_LIMIT_RPM: '1000000',
      ...extraEnv,
    };
  }

  /**
   * The environment of one more process: the deployment's, with (when `isolated`) an empty
   * DATA_DIR and BLOB_DIR of its own that no other process sees.
   */
  processEnv(): Record<string, string> {
    if (!this.isolated) return this.env;
    const dir = mkdtempSync(path.join(this.work, 'node-'));
    this.processDirs.push(dir);
    return { ...this.env, DATA_DIR: dir, BLOB_DIR: path.join(dir, 'blobs') };
  }

  /** A table of the deployment's schema, quoted for SQL. */
  table(name: string): string {
    return `"${this.schema}"."${name}"`;
  }

  /**
   * Freezes a worker (SIGSTOP: it finishes nothing more) and counts the process-lane jobs it holds.
   * The caller kills it, or lets it go on with SIGCONT.
   */
  async freezeAndCount(worker: WorkerProcess): Promise<number> {
    worker.child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, 100));
    return this.jobsHeldBy(worker);
  }

  /** Process-lane jobs a worker holds right now (BullMQ records `<host>/<pid>` on each job it takes). */
  private async jobsHeldBy(worker: WorkerProcess): Promise<number> {
    const name = `${hostname()}/${worker.child.pid}`;
    const active = await this.redis.lrange(`${this.prefix}:process:active`, 0, -1);
    const owners = await Promise.all(
      active.map((id) => this.redis.hget(`${this.prefix}:process:${id}`, 'pb')),
    );
    return owners.filter((owner) => owner === name).length;
  }

  /** `docindex orgs create --json` against the deployment. */
  async createOrg(name: string): Promise<{ org_id: string; api_key: string }> {
    const created = await runCli(['orgs', 'create', '--name', name, '--json'], this.env);
    expect(created.status, created.stderr).toBe(0);
    return JSON.parse(created.stdout.trim()) as { org_id: string; api_key: string };
  }
}

/** Registers the hooks that start `apis` + `workers` processes before the file's tests and remove everything after. */
export function useDeployment(
  services: ServiceStatus,
  opts: { apis: number; workers: number; env?: Record<string, string>; isolated?: boolean },
): Deployment {
  const deployment = new Deployment(services, opts.env ?? {}, opts.isolated ?? false);
  const { env } = deployment;

  beforeAll(async () => {
    const work = mkdtempSync(path.join(tmpdir(), 'docindex-scale-out-'));
    deployment.work = work;
    env.BLOB_DIR = path.join(work, 'blobs');
    env.DATA_DIR = path.join(work, 'data');
    const migrated = await runCli(['migrate'], env);
    expect(migrated.status, migrated.stderr).toBe(0);
    deployment.db = new pg.Pool({ connectionString: deployment.databaseUrl, max: 2 });
    deployment.redis = new Redis(deployment.redisUrl);
    const apis = Array.from({ length: opts.apis }, () =>
      startServer(['serve', '--no-worker'], deployment.processEnv()),
    );
    deployment.apis.push(...(await Promise.all(apis)));
    const workers = Array.from({ length: opts.workers }, () => startWorker(deployment.processEnv()));
    deployment.workers.push(...(await Promise.all(workers)));
  }, 120_000);

  afterAll(async () => {
    await Promise.all([
      ...deployment.apis.map((api) => stopServer(api)),
      ...deployment.workers.map((worker) => stopChild(worker.child)),
    ]);
    await deployment.db?.end();
    deployment.redis?.disconnect();
    await dropSchema(deployment.databaseUrl, deployment.schema);
    await deleteRedisPrefix(deployment.redisUrl, deployment.prefix);
    if (deployment.work) rmSync(deployment.work, { recursive: true, force: true });
  }, 60_000);

  return deployment;
}
