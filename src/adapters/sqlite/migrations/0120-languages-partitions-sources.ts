// SQLite migrations 120 to 186: document languages, pending jobs by org, the webhook backlog bound,
// partitions, trace context of jobs, evaluations, sources and their runs, access lists, usage per
// partition, partition purge jobs.
import type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 120,
    name: 'document languages',
    sql: `
      -- language: what the document's words were analysed in (given or detected), set when it is
      -- indexed; requested_language: what ingest was given for the version in work (NULL: detect).
      ALTER TABLE documents ADD COLUMN language TEXT;
      ALTER TABLE documents ADD COLUMN requested_language TEXT;
      -- The analyses an org's documents were written in: a query is read in each of them, so it
      -- meets every document in that document's own forms. Rows are only added (a language whose
      -- last document went costs a few extra query words, never a wrong answer).
      CREATE TABLE search_languages (
        org_id TEXT NOT NULL,
        language TEXT NOT NULL,
        PRIMARY KEY (org_id, language)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 125,
    name: 'pending jobs by org',
    sql: `
      -- A claim picks the org with the fewest running jobs, then its oldest due job: these indexes
      -- list each lane's orgs with pending jobs (a skip from one org to the next) and give each
      -- org's oldest job, so a claim costs a few lookups per waiting org, not a walk of a backlog.
      CREATE INDEX documents_job_pending_download_org ON documents(org_id, run_at)
        WHERE job_state = 'pending' AND fetch_url IS NOT NULL;
      CREATE INDEX documents_job_pending_process_org ON documents(org_id, run_at)
        WHERE job_state = 'pending' AND fetch_url IS NULL;
    `,
  },
  {
    version: 135,
    name: 'webhook backlog bound',
    sql: `
      -- Events dropped (oldest first) because the endpoint had WEBHOOK_MAX_PENDING messages
      -- waiting; shown on the endpoint so a receiver that fell behind can tell what it missed.
      ALTER TABLE webhook_endpoints ADD COLUMN dropped_messages INTEGER NOT NULL DEFAULT 0;
      -- An endpoint's messages oldest first: the ones dropped when its backlog is full.
      CREATE INDEX webhook_messages_endpoint_created ON webhook_messages(endpoint_id, created_at);
    `,
  },
  {
    version: 140,
    name: 'partitions',
    sql: `
      -- The partition of its org a document belongs to, fixed for its life. The index serves a
      -- list or search restricted to partitions (newest first, as lists read) and the per-partition
      -- counts of GET /v1/partitions.
      ALTER TABLE documents ADD COLUMN partition TEXT NOT NULL DEFAULT 'default';
      CREATE INDEX documents_org_partition ON documents(org_id, partition, created_at);
      -- The partitions a key is limited to, comma-separated; NULL: every partition.
      ALTER TABLE api_keys ADD COLUMN partitions TEXT;
      -- Partitions whose deletion was accepted and whose documents are still being purged: the
      -- mark outlives a crash, so the purge resumes, and ingest into them is refused meanwhile.
      CREATE TABLE partition_deletions (
        org_id TEXT NOT NULL,
        name TEXT NOT NULL,
        marked_at INTEGER NOT NULL,
        PRIMARY KEY (org_id, name)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 150,
    name: 'trace context of jobs',
    sql: `
      -- The W3C traceparent of the request that queued the document's job: the worker's spans
      -- join that request's trace. Null when tracing is off.
      ALTER TABLE documents ADD COLUMN job_traceparent TEXT;
    `,
  },
  {
    version: 155,
    name: 'evaluations',
    sql: `
      -- An evaluation: its request (queries with judged documents, runs) and, once done, its
      -- results, all JSON. The row is also its job (job_* columns, as a document's row is).
      CREATE TABLE evaluations (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL,
        name TEXT,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        top_k INTEGER NOT NULL,
        queries TEXT NOT NULL,
        runs TEXT NOT NULL,
        summary TEXT,
        report TEXT,
        error TEXT,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        finished_at INTEGER,
        job_state TEXT NOT NULL CHECK (job_state IN ('pending', 'leased', 'done')),
        run_at INTEGER NOT NULL,
        lease_owner TEXT,
        lease_until INTEGER,
        job_attempts INTEGER NOT NULL DEFAULT 0
      ) STRICT;
    `,
  },
  {
    version: 156,
    name: 'evaluation lists and jobs',
    sql: `
      -- An org's evaluations newest first (GET /v1/evaluations), and the jobs a claim looks at.
      CREATE INDEX evaluations_org_created ON evaluations(org_id, created_at DESC, id DESC);
      CREATE INDEX evaluations_job_pending ON evaluations(run_at) WHERE job_state = 'pending';
      CREATE INDEX evaluations_job_leased ON evaluations(lease_until) WHERE job_state = 'leased';
    `,
  },
  {
    version: 160,
    name: 'sources and their items',
    sql: `
      -- A source: a collection (an S3 bucket) kept in sync with the org's documents. config is
      -- the type's JSON without credentials; credentials are sealed (AES-256-GCM, SECRETS_KEY).
      -- schedule_ms and next_run_at are NULL for a manual source. deleted_at: gone for the API,
      -- its documents being removed by a run.
      CREATE TABLE sources (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL,
        type TEXT NOT NULL,
        name TEXT NOT NULL,
        config TEXT NOT NULL,
        credentials TEXT,
        schedule TEXT NOT NULL,
        schedule_ms INTEGER,
        next_run_at INTEGER,
        partition TEXT,
        metadata TEXT NOT NULL,
        access TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        deleted_at INTEGER
      ) STRICT;
      CREATE INDEX sources_org ON sources(org_id, created_at);
      CREATE INDEX sources_due ON sources(next_run_at) WHERE next_run_at IS NOT NULL AND deleted_at IS NULL;
      CREATE INDEX sources_deleted ON sources(deleted_at) WHERE deleted_at IS NOT NULL;
      -- What the last run recorded of each item: its change token and its document.
      -- changed_by_run: the run that last added or updated it (a resumed run counts it once).
      CREATE TABLE source_items (
        source_id TEXT NOT NULL,
        key TEXT NOT NULL,
        etag TEXT NOT NULL,
        document_id TEXT NOT NULL,
        changed_by_run TEXT,
        PRIMARY KEY (source_id, key)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 165,
    name: 'source runs',
    sql: `
      -- A source's run, which is also its job (job_* columns, leased on the lease-queue engine
      -- as a document's row is). errors: the first per-item errors, JSON.
      CREATE TABLE source_runs (
        id TEXT PRIMARY KEY,
        source_id TEXT NOT NULL,
        org_id TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        finished_at INTEGER,
        added INTEGER NOT NULL DEFAULT 0,
        updated INTEGER NOT NULL DEFAULT 0,
        deleted INTEGER NOT NULL DEFAULT 0,
        unchanged INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        errors TEXT NOT NULL DEFAULT '[]',
        job_state TEXT NOT NULL DEFAULT 'pending',
        run_at INTEGER NOT NULL,
        lease_owner TEXT,
        lease_until INTEGER,
        job_attempts INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      -- One run per source at a time, whichever process asks.
      CREATE UNIQUE INDEX source_runs_active ON source_runs(source_id) WHERE status IN ('queued', 'running');
      CREATE INDEX source_runs_source ON source_runs(source_id, created_at);
      CREATE INDEX source_runs_job ON source_runs(job_state, run_at);
    `,
  },
  {
    version: 170,
    name: 'access lists',
    sql: `
      -- A document's access list, a JSON array of principals; NULL: none (anyone who may see its
      -- partition sees it). Searches and lists test it on the document row, beside the partition.
      ALTER TABLE documents ADD COLUMN access TEXT;
      -- The principals a key is bound to, a JSON array; NULL: unbound.
      ALTER TABLE api_keys ADD COLUMN principals TEXT;
    `,
  },
  {
    version: 175,
    name: 'source item links',
    sql: `
      -- What a source type keeps of an item for the next run (a web page's links, JSON), so a
      -- page answered "not modified" is still followed.
      ALTER TABLE source_items ADD COLUMN links TEXT;
    `,
  },
  {
    version: 180,
    name: 'evaluation query counts',
    sql: `
      -- How many queries an evaluation has: the list shows it without reading the queries.
      ALTER TABLE evaluations ADD COLUMN query_count INTEGER NOT NULL DEFAULT 0;
      UPDATE evaluations SET query_count = json_array_length(queries);
    `,
  },
  {
    version: 185,
    name: 'usage per partition',
    sql: `
      -- Queries restricted to partitions, per org, day and bucket (a partition's name, or
      -- '(several)' for a query over more than one); usage_daily keeps the org's total.
      CREATE TABLE usage_partition_daily (
        org_id TEXT NOT NULL,
        day TEXT NOT NULL,
        bucket TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (org_id, day, bucket)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 186,
    name: 'partition purge jobs',
    sql: `
      -- A partition's mark for deletion is also its purge's job (job_* columns, leased on the
      -- lease-queue engine as a source run is), so one process purges a partition at a time.
      ALTER TABLE partition_deletions ADD COLUMN id TEXT;
      UPDATE partition_deletions SET id = 'pd_' || lower(hex(randomblob(16)));
      ALTER TABLE partition_deletions ADD COLUMN job_state TEXT NOT NULL DEFAULT 'pending';
      ALTER TABLE partition_deletions ADD COLUMN run_at INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE partition_deletions ADD COLUMN lease_owner TEXT;
      ALTER TABLE partition_deletions ADD COLUMN lease_until INTEGER;
      ALTER TABLE partition_deletions ADD COLUMN job_attempts INTEGER NOT NULL DEFAULT 0;
      CREATE UNIQUE INDEX partition_deletions_id ON partition_deletions(id);
      CREATE INDEX partition_deletions_job ON partition_deletions(job_state, run_at);
    `,
  },
  {
    version: 190,
    name: 'principals of access lists indexed',
    sql: `
      -- One row per principal of each document's access list, kept by triggers in the very
      -- statement that writes documents.access or moves a row to another org, as
      -- document_metadata is: the documents a request's principals may see are an index range
      -- (with the org's documents without a list) instead of a read of every row of the org.
      CREATE TABLE document_principals (
        org_id TEXT NOT NULL,
        principal TEXT NOT NULL,
        document_id TEXT NOT NULL,
        PRIMARY KEY (org_id, principal, document_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX document_principals_document ON document_principals(document_id);
      CREATE INDEX documents_org_open ON documents(org_id) WHERE access IS NULL;
      INSERT OR IGNORE INTO document_principals (org_id, principal, document_id)
        SELECT d.org_id, a.value, d.id FROM documents AS d, json_each(d.access) AS a
        WHERE d.access IS NOT NULL;
      CREATE TRIGGER documents_principals_insert AFTER INSERT ON documents WHEN new.access IS NOT NULL BEGIN
        INSERT OR IGNORE INTO document_principals (org_id, principal, document_id)
          SELECT new.org_id, a.value, new.id FROM json_each(new.access) AS a;
      END;
      CREATE TRIGGER documents_principals_update AFTER UPDATE OF access, org_id ON documents
        WHEN old.access IS NOT new.access OR old.org_id IS NOT new.org_id BEGIN
        DELETE FROM document_principals WHERE document_id = old.id;
        INSERT OR IGNORE INTO document_principals (org_id, principal, document_id)
          SELECT new.org_id, a.value, new.id FROM json_each(new.access) AS a WHERE new.access IS NOT NULL;
      END;
      CREATE TRIGGER documents_principals_delete AFTER DELETE ON documents WHEN old.access IS NOT NULL BEGIN
        DELETE FROM document_principals WHERE document_id = old.id;
      END;
    `,
  },
];
