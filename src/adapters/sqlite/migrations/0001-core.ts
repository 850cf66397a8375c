// SQLite migrations 1 to 7: the initial schema (orgs, keys, documents with their jobs, chunks and
// their FTS5 index, usage), idempotency keys, pending jobs by lane, index runs, FTS5 merges, search
// analysis, key scopes and org purge.
import type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
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
];
