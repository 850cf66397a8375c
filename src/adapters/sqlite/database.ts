// Opens the embedded-mode SQLite database and keeps its schema current. One file holds the
// records, the full-text index and the job queue, so every process sharing it (server, worker)
// opens it through here and gets the same pragmas and the same migrated schema.
import BetterSqlite3 from 'better-sqlite3';

export type Database = BetterSqlite3.Database;

interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Append only: a migration that has shipped is never edited, because databases in the field have
// already recorded its version and will not run it again.
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
      CREATE TABLE orgs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        rate_limit_rpm INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
        hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      ) STRICT;
      CREATE INDEX api_keys_org ON api_keys(org_id);

      -- A document row is also its job (job_* columns), so "document and job committed together"
      -- holds by construction. No foreign key to orgs: the document port cannot create orgs, and
      -- orgs are never deleted.
      CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'ready', 'failed')),
        source_type TEXT NOT NULL CHECK (source_type IN ('text', 'file', 'url')),
        filename TEXT,
        source_url TEXT,
        content_type TEXT,
        bytes INTEGER,
        metadata TEXT NOT NULL,
        chunk_size INTEGER NOT NULL,
        chunk_overlap INTEGER NOT NULL,
        tokenizer TEXT NOT NULL,
        chunk_count INTEGER,
        token_count INTEGER,
        content_sha256 TEXT,
        error_code TEXT,
        error_message TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        input_text TEXT,
        blob_key TEXT,
        fetch_url TEXT,
        job_state TEXT NOT NULL CHECK (job_state IN ('pending', 'leased', 'done')),
        run_at INTEGER NOT NULL,
        lease_owner TEXT,
        lease_until INTEGER,
        job_attempts INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE INDEX documents_org_created ON documents(org_id, created_at DESC, id DESC);
      CREATE INDEX documents_org_status_created ON documents(org_id, status, created_at DESC, id DESC);
      CREATE INDEX documents_org_sha ON documents(org_id, content_sha256, created_at DESC, id DESC)
        WHERE content_sha256 IS NOT NULL;
      -- Partial indexes: finished documents (nearly all rows) stay out of the hot queue indexes.
      CREATE INDEX documents_unfinished ON documents(status) WHERE status IN ('queued', 'processing');
      CREATE INDEX documents_queued_updated ON documents(updated_at, id) WHERE status = 'queued';
      CREATE INDEX documents_job_pending ON documents(run_at) WHERE job_state = 'pending';
      CREATE INDEX documents_job_leased ON documents(lease_until) WHERE job_state = 'leased';

      CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        chunk_index INTEGER NOT NULL,
        text TEXT NOT NULL,
        token_count INTEGER NOT NULL,
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL,
        page_start INTEGER,
        page_end INTEGER,
        UNIQUE (document_id, chunk_index)
      ) STRICT;

      -- Each org's number inside FTS terms (see fts-terms.ts). Rows are never deleted, so a key
      -- once handed out always means the same org.
      CREATE TABLE fts_orgs (
        id INTEGER PRIMARY KEY,
        org_id TEXT NOT NULL UNIQUE
      ) STRICT;

      -- Contentless: the text lives once, in chunks; this holds only the org-prefixed terms. The
      -- words are cut in JS, so the tokenizer splits on spaces only (every other category is part
      -- of a token).
      CREATE VIRTUAL TABLE chunks_fts USING fts5(
        terms,
        content = '',
        contentless_delete = 1,
        tokenize = "unicode61 remove_diacritics 0 categories 'L* N* Co M* P* S* C*'"
      );
      -- Whichever way a chunk goes (explicit delete or cascade from its document), its index row
      -- goes with it in the same transaction.
      CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM chunks_fts WHERE rowid = old.id;
      END;

      CREATE TABLE usage_daily (
        org_id TEXT NOT NULL,
        day TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (org_id, day)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: 'idempotency keys',
    sql: `
      CREATE TABLE idempotency_keys (
        org_id TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
        status INTEGER,
        body TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (org_id, key)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
    `,
  },
  {
    version: 3,
    name: 'pending jobs by lane',
    sql: `
      -- One index of pending jobs per queue lane (download: fetch_url set; process: the rest).
      -- With one index for both, each download claim stepped over the whole backlog of text
      -- documents, reading fetch_url for each. The lanes' queries repeat these WHERE terms, so
      -- SQLite can use the indexes; no query is left that needs the index of every pending job.
      CREATE INDEX documents_job_pending_download ON documents(run_at)
        WHERE job_state = 'pending' AND fetch_url IS NOT NULL;
      CREATE INDEX documents_job_pending_process ON documents(run_at)
        WHERE job_state = 'pending' AND fetch_url IS NULL;
      DROP INDEX documents_job_pending;
    `,
  },
  {
    version: 4,
    name: 'index runs',
    sql: `
      -- A large document's chunks are written in several short transactions (see
      -- SqliteDocumentStore.saveIndex); the run writing them stamps the document, so a stale run
      -- that lost its job to another one stops at its next slice instead of adding chunks.
      ALTER TABLE documents ADD COLUMN index_run TEXT;
    `,
  },
  {
    version: 5,
    name: 'no merges for deletes alone',
    sql: `
      -- By default FTS5 rewrites a segment once a tenth of its rows are deleted. Deleting a large
      -- document a slice at a time then rewrites its big segments again and again, each slice
      -- on the event loop. With 100, deleted rows leave their segments in the ordinary merges
      -- instead, and each slice only deletes.
      INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('deletemerge', 100);
    `,
  },
  {
    version: 6,
    name: 'search analysis',
    sql: `
      -- Which analysis (SEARCH_LANGUAGE) the index's words were written with, and how far
      -- "docindex reindex" has rewritten them to another one. Chunks indexed before this version
      -- were folded but not stemmed: 'none'. NULL until the first process records its own.
      CREATE TABLE search_analysis (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        written TEXT,
        reindex_target TEXT,
        reindex_after INTEGER
      ) STRICT;
      INSERT INTO search_analysis (id, written)
        SELECT 1, CASE WHEN EXISTS (SELECT 1 FROM chunks) THEN 'none' END;
    `,
  },
  {
    version: 7,
    name: 'key scopes and expiry; org purge',
    sql: `
      -- Keys made before scopes existed keep every scope.
      ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'ingest,query,read,write,webhooks';
      ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;

      -- Orgs can now be purged, and their fts_orgs row goes with them. AUTOINCREMENT keeps a purged
      -- org's number from ever being handed to another org.
      CREATE TABLE fts_orgs_numbered (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        org_id TEXT NOT NULL UNIQUE
      ) STRICT;
      INSERT INTO fts_orgs_numbered (id, org_id) SELECT id, org_id FROM fts_orgs;
      DROP TABLE fts_orgs;
      ALTER TABLE fts_orgs_numbered RENAME TO fts_orgs;
    `,
  },
  {
    version: 10,
    name: 'external ids and versions',
    sql: `
      -- The caller's own key for a document, unique per org: a second ingest with it makes a new
      -- version of the same document. Rows handed to no org (being purged) have none.
      ALTER TABLE documents ADD COLUMN external_id TEXT;
      CREATE UNIQUE INDEX documents_org_external ON documents(org_id, external_id)
        WHERE external_id IS NOT NULL;
      -- version: the one the record's status and the chunks describe. pending_*: a newer version
      -- on its way while that one answers queries (pending is JSON: its source, chunk settings,
      -- blob and error; see sql-rows/document-row.ts).
      ALTER TABLE documents ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE documents ADD COLUMN pending_version INTEGER;
      ALTER TABLE documents ADD COLUMN pending_status TEXT
        CHECK (pending_status IN ('queued', 'processing', 'failed'));
      ALTER TABLE documents ADD COLUMN pending TEXT;
      CREATE INDEX documents_pending_unfinished ON documents(updated_at, id)
        WHERE pending_status IN ('queued', 'processing');
    `,
  },
  {
    version: 20,
    name: 'webhooks',
    sql: `
      CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL,
        url TEXT NOT NULL,
        -- Comma-separated event types: the outbox insert matches ',type,' in ',events,'.
        events TEXT NOT NULL,
        description TEXT,
        secret TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        disabled_at INTEGER,
        disabled_reason TEXT,
        failing_since INTEGER
      ) STRICT;
      CREATE INDEX webhook_endpoints_org ON webhook_endpoints(org_id, created_at);

      -- The outbox: one row per event and endpoint, written in the transaction of the status
      -- change; removed once delivered or given up. payload is the status record (JSON of the
      -- record columns) as it was at the change; NULL for a test message.
      CREATE TABLE webhook_messages (
        id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        org_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        document_id TEXT,
        payload TEXT,
        created_at INTEGER NOT NULL,
        next_attempt_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        lease_owner TEXT,
        lease_until INTEGER
      ) STRICT;
      CREATE INDEX webhook_messages_due ON webhook_messages(next_attempt_at);
      CREATE INDEX webhook_messages_endpoint ON webhook_messages(endpoint_id);
      CREATE INDEX webhook_messages_created ON webhook_messages(created_at);

      -- The delivery log, kept to the newest attempts of each endpoint.
      CREATE TABLE webhook_attempts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        org_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        status_code INTEGER,
        duration_ms INTEGER NOT NULL,
        error TEXT,
        outcome TEXT NOT NULL,
        at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX webhook_attempts_endpoint ON webhook_attempts(endpoint_id, id);
    `,
  },
  {
    version: 30,
    name: 'chunk vectors',
    sql: `
      -- Which model made a vector (provider, model, length): vectors of two profiles are never
      -- compared, and a profile change leaves the old vectors until the new ones replace them.
      CREATE TABLE vector_profiles (
        id INTEGER PRIMARY KEY,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        dimensions INTEGER NOT NULL,
        UNIQUE (provider, model, dimensions)
      ) STRICT;
      -- A vector belongs to its chunk: deleting or replacing a document's chunks removes their
      -- vectors in the same transaction, whoever deletes them, and a chunk row moved to another
      -- document (a version swap retires the current chunks under a holder row) takes its vectors
      -- along, to be purged with it. The embedding is little-endian
      -- float32, as sqlite-vec's functions read it.
      CREATE TABLE chunk_vectors (
        document_id TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        profile_id INTEGER NOT NULL REFERENCES vector_profiles(id),
        org_id TEXT NOT NULL,
        embedding BLOB NOT NULL,
        PRIMARY KEY (document_id, chunk_index, profile_id),
        FOREIGN KEY (document_id, chunk_index) REFERENCES chunks(document_id, chunk_index) ON DELETE CASCADE ON UPDATE CASCADE
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX chunk_vectors_org ON chunk_vectors(org_id, profile_id);
    `,
  },
  {
    version: 31,
    name: 'vector stage state',
    sql: `
      -- The second stage of a ready document, per profile: no row means pending (never tried);
      -- 'pending' with an error means waiting out a provider outage until next_attempt_at.
      CREATE TABLE document_vectors (
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        profile_id INTEGER NOT NULL REFERENCES vector_profiles(id),
        org_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
        error_code TEXT,
        error_message TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL DEFAULT 0,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (document_id, profile_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX document_vectors_due ON document_vectors(profile_id, status, next_attempt_at);
      -- Chunks replaced (a re-chunk, a new version) take their vectors with them (cascade); the
      -- document's vector state goes too, so the stage embeds the new chunks.
      CREATE TRIGGER chunks_vector_state_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM document_vectors WHERE document_id = old.document_id;
      END;
      CREATE TRIGGER chunks_vector_state_move AFTER UPDATE OF document_id ON chunks BEGIN
        DELETE FROM document_vectors WHERE document_id IN (old.document_id, new.document_id);
      END;
    `,
  },
  {
    version: 40,
    name: 'pages recognised by OCR',
    sql: `
      -- Null for documents indexed before OCR existed and for formats that never need it.
      ALTER TABLE documents ADD COLUMN ocr_pages INTEGER;
    `,
  },
  {
    version: 70,
    name: 'metadata entries',
    sql: `
      -- One row per metadata key of each document, kept by triggers in the very statement that
      -- writes documents.metadata or moves a row to another org (ingest, new version, PATCH,
      -- delete, org purge): a filter's leaf becomes an index range of document ids instead of
      -- parsing the JSON of every document of the org (keyword-index.ts, filter-sql.ts).
      -- Values compare bytewise, as json_each's do; a value that is not a string (metadata holds
      -- none, domain/metadata.ts) is NULL, so it passes $exists and no comparison, as in filter-sql.ts.
      CREATE TABLE document_metadata (
        document_id TEXT NOT NULL,
        key TEXT NOT NULL,
        org_id TEXT NOT NULL,
        value TEXT,
        PRIMARY KEY (document_id, key)
      ) WITHOUT ROWID;
      CREATE INDEX document_metadata_lookup ON document_metadata(org_id, key, value, document_id);
      INSERT INTO document_metadata (document_id, key, org_id, value)
        SELECT d.id, m.key, d.org_id, CASE WHEN m.type = 'text' THEN m.value END
        FROM documents AS d, json_each(d.metadata) AS m;
      CREATE TRIGGER documents_metadata_insert AFTER INSERT ON documents BEGIN
        INSERT INTO document_metadata (document_id, key, org_id, value)
          SELECT new.id, m.key, new.org_id, CASE WHEN m.type = 'text' THEN m.value END
          FROM json_each(new.metadata) AS m;
      END;
      CREATE TRIGGER documents_metadata_update AFTER UPDATE OF metadata, org_id ON documents
        WHEN old.metadata IS NOT new.metadata OR old.org_id IS NOT new.org_id BEGIN
        DELETE FROM document_metadata WHERE document_id = old.id;
        INSERT INTO document_metadata (document_id, key, org_id, value)
          SELECT new.id, m.key, new.org_id, CASE WHEN m.type = 'text' THEN m.value END
          FROM json_each(new.metadata) AS m;
      END;
      CREATE TRIGGER documents_metadata_delete AFTER DELETE ON documents BEGIN
        DELETE FROM document_metadata WHERE document_id = old.id;
      END;
    `,
  },
  {
    version: 90,
    name: 'chunk vectors in a rowid table, with sign bits',
    sql: `
      -- A WITHOUT ROWID table keeps whole rows in its interior pages: with a 1.5 kB embedding per
      -- row every lookup walked overflow pages, so even a few thousand vectors were slow to read.
      -- Rows now live in a rowid table; id only grows (AUTOINCREMENT), so a process can
      -- read the rows added since it last looked (the in-process sign index: vector-index.ts).
      -- signs: one bit per dimension, set when the value is positive; NULL until the vector index
      -- back-fills it (rows copied here from before this version).
      CREATE TABLE chunk_vectors_v2 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        document_id TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        profile_id INTEGER NOT NULL REFERENCES vector_profiles(id),
        org_id TEXT NOT NULL,
        embedding BLOB NOT NULL,
        signs BLOB,
        UNIQUE (document_id, chunk_index, profile_id),
        FOREIGN KEY (document_id, chunk_index) REFERENCES chunks(document_id, chunk_index) ON DELETE CASCADE ON UPDATE CASCADE
      ) STRICT;
      INSERT INTO chunk_vectors_v2 (document_id, chunk_index, profile_id, org_id, embedding)
        SELECT document_id, chunk_index, profile_id, org_id, embedding FROM chunk_vectors
        ORDER BY org_id, profile_id;
      DROP TABLE chunk_vectors;
      ALTER TABLE chunk_vectors_v2 RENAME TO chunk_vectors;
      CREATE INDEX chunk_vectors_org ON chunk_vectors(org_id, profile_id, id);
      CREATE INDEX chunk_vectors_unsigned ON chunk_vectors(id) WHERE signs IS NULL;
      -- Rows deleted (a deleted or re-chunked document, a replaced vector), so an in-process sign
      -- index drops them without reloading. Only the newest 100,000 entries are kept (each new one
      -- removes the one that fell out of the window): an index that fell further behind rebuilds
      -- from chunk_vectors (sign-index.ts). No org id is kept, so a purged org leaves nothing here;
      -- a missed entry costs a wasted candidate, never a wrong answer: candidates are re-read.
      CREATE TABLE chunk_vectors_gone (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        vector_id INTEGER NOT NULL
      ) STRICT;
      CREATE TRIGGER chunk_vectors_gone_log AFTER DELETE ON chunk_vectors BEGIN
        INSERT INTO chunk_vectors_gone (vector_id) VALUES (old.id);
        DELETE FROM chunk_vectors_gone WHERE seq <= last_insert_rowid() - 100000;
      END;
    `,
  },
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
];

/** Opens (creating if needed) a database file, or ':memory:', and migrates it. */
export function openSqlite(file: string): Database {
  const db = new BetterSqlite3(file, { timeout: 5000 });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    migrateSqlite(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Applies every migration not yet recorded. Safe to run concurrently from several processes. */
export function migrateSqlite(db: Database): { applied: number[] } {
  const applied: number[] = [];
  // IMMEDIATE takes the write lock before reading the version list, so two processes starting on
  // one file cannot both decide to apply the same migration.
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT`);
    const done = new Set(
      db
        .prepare<[], number>('SELECT version FROM schema_migrations')
        .pluck()
        .all()
        .map((v) => Number(v)),
    );
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now());
      applied.push(m.version);
    }
  }).immediate();
  return { applied };
}

/** The newest schema version this code knows. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** Every version this code applies, in order (not necessarily consecutive). */
export const SQLITE_SCHEMA_VERSIONS: readonly number[] = MIGRATIONS.map((m) => m.version);
