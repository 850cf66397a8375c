// PostgreSQL migrations 140 to 186: partitions, trace context of jobs, evaluations, sources and
// their runs, access lists, usage per partition, partition purge jobs.
import type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 140,
    name: 'partitions',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // As in SQLite: each document's partition (fixed for its life) with an index for lists,
      // searches and counts restricted to partitions; the partitions a key is limited to
      // (comma-separated, NULL: all); and the partitions whose purge is under way.
      await tx.query(`
        ALTER TABLE ${t('documents')} ADD COLUMN IF NOT EXISTS partition text NOT NULL DEFAULT 'default';
        CREATE INDEX IF NOT EXISTS documents_org_partition ON ${t('documents')} (org_id, partition, created_at);
        ALTER TABLE ${t('api_keys')} ADD COLUMN IF NOT EXISTS partitions text;
        CREATE TABLE IF NOT EXISTS ${t('partition_deletions')} (
          org_id text NOT NULL,
          name text NOT NULL,
          marked_at timestamptz NOT NULL,
          PRIMARY KEY (org_id, name)
        );
      `);
    },
  },
  {
    version: 150,
    name: 'trace context of jobs',
    async apply(tx, db) {
      // As in SQLite: the traceparent of the request that queued the document's job, so the
      // worker's spans join its trace; null when tracing is off.
      await tx.query(`ALTER TABLE ${db.table('documents')} ADD COLUMN IF NOT EXISTS job_traceparent text`);
    },
  },
  {
    version: 155,
    name: 'evaluations',
    async apply(tx, db) {
      // As in SQLite: an evaluation's request and results (JSON), its row also its job.
      await tx.query(`
        CREATE TABLE IF NOT EXISTS ${db.table('evaluations')} (
          id text PRIMARY KEY,
          org_id text NOT NULL,
          name text,
          status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
          top_k integer NOT NULL,
          queries jsonb NOT NULL,
          runs jsonb NOT NULL,
          summary jsonb,
          report jsonb,
          error jsonb,
          created_at timestamptz NOT NULL,
          started_at timestamptz,
          finished_at timestamptz,
          job_state text NOT NULL CHECK (job_state IN ('pending', 'leased', 'done')),
          run_at timestamptz NOT NULL,
          lease_owner text,
          lease_until timestamptz,
          job_attempts integer NOT NULL DEFAULT 0
        );
      `);
    },
  },
  {
    version: 156,
    name: 'evaluation lists and jobs',
    async apply(tx, db) {
      const evaluations = db.table('evaluations');
      // An org's evaluations newest first, and the jobs a claim looks at.
      await tx.query(`
        CREATE INDEX IF NOT EXISTS evaluations_org_created ON ${evaluations} (org_id, created_at DESC, id DESC);
        CREATE INDEX IF NOT EXISTS evaluations_job_pending ON ${evaluations} (run_at) WHERE job_state = 'pending';
        CREATE INDEX IF NOT EXISTS evaluations_job_leased ON ${evaluations} (lease_until) WHERE job_state = 'leased';
      `);
    },
  },
  {
    version: 160,
    name: 'sources and their items',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // As in SQLite: sources (credentials sealed with SECRETS_KEY, config without them) and what
      // the last run recorded of each item.
      await tx.query(`
        CREATE TABLE ${t('sources')} (
          id text PRIMARY KEY,
          org_id text NOT NULL,
          type text NOT NULL,
          name text NOT NULL,
          config jsonb NOT NULL,
          credentials text,
          schedule text NOT NULL,
          schedule_ms bigint,
          next_run_at timestamptz,
          partition text,
          metadata jsonb NOT NULL,
          access jsonb,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          deleted_at timestamptz
        );
        CREATE INDEX ON ${t('sources')} (org_id, created_at);
        CREATE INDEX ON ${t('sources')} (next_run_at) WHERE next_run_at IS NOT NULL AND deleted_at IS NULL;
        CREATE INDEX ON ${t('sources')} (deleted_at) WHERE deleted_at IS NOT NULL;
        CREATE TABLE ${t('source_items')} (
          source_id text NOT NULL,
          key text NOT NULL,
          etag text NOT NULL,
          document_id text NOT NULL,
          changed_by_run text,
          PRIMARY KEY (source_id, key)
        );
      `);
    },
  },
  {
    version: 165,
    name: 'source runs',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // As in SQLite: a run is also its job (job_* columns on the lease-queue engine), one run
      // per source at a time.
      await tx.query(`
        CREATE TABLE ${t('source_runs')} (
          id text PRIMARY KEY,
          source_id text NOT NULL,
          org_id text NOT NULL,
          status text NOT NULL,
          created_at timestamptz NOT NULL,
          started_at timestamptz,
          finished_at timestamptz,
          added integer NOT NULL DEFAULT 0,
          updated integer NOT NULL DEFAULT 0,
          deleted integer NOT NULL DEFAULT 0,
          unchanged integer NOT NULL DEFAULT 0,
          failed integer NOT NULL DEFAULT 0,
          errors jsonb NOT NULL DEFAULT '[]',
          job_state text NOT NULL DEFAULT 'pending',
          run_at timestamptz NOT NULL DEFAULT now(),
          lease_owner text,
          lease_until timestamptz,
          job_attempts integer NOT NULL DEFAULT 0
        );
        CREATE UNIQUE INDEX ON ${t('source_runs')} (source_id) WHERE status IN ('queued', 'running');
        CREATE INDEX ON ${t('source_runs')} (source_id, created_at);
        CREATE INDEX ON ${t('source_runs')} (job_state, run_at);
      `);
    },
  },
  {
    version: 170,
    name: 'access lists',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // As in SQLite, a document's access list (NULL: none) and a key's principals (a JSON
      // array; NULL: unbound). The list is a text[] so a request's principals are one overlap
      // (&&), which the GIN index answers when few documents share them.
      await tx.query(`
        ALTER TABLE ${t('documents')} ADD COLUMN IF NOT EXISTS access text[];
        CREATE INDEX IF NOT EXISTS documents_access ON ${t('documents')} USING gin (access);
        ALTER TABLE ${t('api_keys')} ADD COLUMN IF NOT EXISTS principals text;
      `);
    },
  },
  {
    version: 175,
    name: 'source item links',
    async apply(tx, db) {
      // As in SQLite: what a source type keeps of an item for the next run (a web page's links).
      await tx.query(`ALTER TABLE ${db.table('source_items')} ADD COLUMN links jsonb`);
    },
  },
  {
    version: 180,
    name: 'evaluation query counts',
    async apply(tx, db) {
      // As in SQLite: the list shows how many queries an evaluation has without reading them.
      const evaluations = db.table('evaluations');
      await tx.query(`
        ALTER TABLE ${evaluations} ADD COLUMN IF NOT EXISTS query_count integer NOT NULL DEFAULT 0;
        UPDATE ${evaluations} SET query_count = jsonb_array_length(queries);
      `);
    },
  },
  {
    version: 185,
    name: 'usage per partition',
    async apply(tx, db) {
      // As in SQLite: queries restricted to partitions, per org, day and bucket (a partition's
      // name, or '(several)'); usage_daily keeps the org's total.
      await tx.query(`
        CREATE TABLE ${db.table('usage_partition_daily')} (
          org_id text COLLATE "C" NOT NULL,
          day text COLLATE "C" NOT NULL,
          bucket text COLLATE "C" NOT NULL,
          count bigint NOT NULL,
          PRIMARY KEY (org_id, day, bucket)
        );
      `);
    },
  },
  {
    version: 186,
    name: 'partition purge jobs',
    async apply(tx, db) {
      const t = db.table('partition_deletions');
      // As in SQLite: a partition's mark is also its purge's job, leased on the lease-queue
      // engine, so one process purges a partition at a time.
      await tx.query(`
        ALTER TABLE ${t} ADD COLUMN id text;
        UPDATE ${t} SET id = 'pd_' || replace(gen_random_uuid()::text, '-', '');
        ALTER TABLE ${t} ALTER COLUMN id SET NOT NULL,
          ADD COLUMN job_state text NOT NULL DEFAULT 'pending',
          ADD COLUMN run_at timestamptz NOT NULL DEFAULT now(),
          ADD COLUMN lease_owner text,
          ADD COLUMN lease_until timestamptz,
          ADD COLUMN job_attempts integer NOT NULL DEFAULT 0;
        CREATE UNIQUE INDEX ON ${t} (id);
        CREATE INDEX ON ${t} (job_state, run_at);
      `);
    },
  },
  {
    version: 190,
    name: 'documents without an access list indexed',
    async apply(tx, db) {
      // A request's principals may see the documents whose list shares one of them (the GIN
      // index on access) and those without a list: with this index beside it, the planner finds
      // both as a bitmap OR of two index scans instead of reading every document row of the org.
      await tx.query(`
        CREATE INDEX IF NOT EXISTS documents_org_open ON ${db.table('documents')} (org_id) WHERE access IS NULL;
      `);
    },
  },
];
