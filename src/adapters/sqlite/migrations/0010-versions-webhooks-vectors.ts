// SQLite migrations 10 to 90: document versions and external ids, webhooks, chunk vectors and the
// vector stage's state, OCR page counts, metadata entries for filters, vectors in a rowid table
// with sign bits.
import type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
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
];
