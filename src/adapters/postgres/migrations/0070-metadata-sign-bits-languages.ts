// PostgreSQL migrations 70 to 135: metadata entries for filters, the sign prefilter's covering
// index and change feed, vectors as bytes, document languages, pending jobs by org, deletes that
// wait for no index write, the webhook backlog bound.
import type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 70,
    name: 'metadata entries',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // One row per metadata key of each document, kept by a trigger in the very statement that
      // writes documents.metadata or moves a row to another org (ingest, new version, PATCH, org
      // purge), and removed with the document (cascade): a filter's leaf becomes an index range
      // of document ids instead of reading the jsonb of every document of the org
      // (keyword/search.ts, filter-sql.ts). The value is what `->>` gives, so a leaf on this
      // table selects what the same leaf on the jsonb does; COLLATE "C" orders it as filters do.
      await tx.query(`
        CREATE TABLE ${t('document_metadata')} (
          document_id text COLLATE "C" NOT NULL REFERENCES ${t('documents')} (id) ON DELETE CASCADE,
          key text COLLATE "C" NOT NULL,
          org_id text COLLATE "C" NOT NULL,
          value text COLLATE "C",
          PRIMARY KEY (document_id, key)
        );
        INSERT INTO ${t('document_metadata')} (document_id, key, org_id, value)
          SELECT d.id, e.key, d.org_id, e.value FROM ${t('documents')} AS d, jsonb_each_text(d.metadata) AS e;
        CREATE INDEX document_metadata_lookup ON ${t('document_metadata')} (org_id, key, value, document_id);
        CREATE FUNCTION ${t('write_document_metadata')}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'UPDATE' THEN
            DELETE FROM ${t('document_metadata')} WHERE document_id = OLD.id;
          END IF;
          INSERT INTO ${t('document_metadata')} (document_id, key, org_id, value)
            SELECT NEW.id, e.key, NEW.org_id, e.value FROM jsonb_each_text(NEW.metadata) AS e;
          RETURN NULL;
        END $$;
        CREATE TRIGGER documents_metadata_insert AFTER INSERT ON ${t('documents')}
          FOR EACH ROW EXECUTE FUNCTION ${t('write_document_metadata')}();
        CREATE TRIGGER documents_metadata_update AFTER UPDATE OF metadata, org_id ON ${t('documents')}
          FOR EACH ROW WHEN (OLD.metadata IS DISTINCT FROM NEW.metadata OR OLD.org_id IS DISTINCT FROM NEW.org_id)
          EXECUTE FUNCTION ${t('write_document_metadata')}();
      `);
    },
  },
  {
    version: 90,
    name: 'covering index for the sign prefilter',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // The prefilter reads the sign bits of every vector of an org and profile: from the heap that
      // is ~1.6 kB a row (the float array is stored inline), from this index ~100 bytes, and with
      // the visibility map set (autovacuum) an index-only scan never touches the heap. It replaces
      // the plain (org_id, profile_id) index, which it also serves.
      await tx.query(`
        CREATE INDEX chunk_vectors_signs ON ${t('chunk_vectors')} (org_id, profile_id)
          INCLUDE (document_id, chunk_index, signs);
        DROP INDEX IF EXISTS ${t('chunk_vectors_org_id_profile_id_idx')};
      `);
    },
  },
  {
    version: 100,
    name: 'change feed for in-memory sign bits',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // Each API process holds the sign bits of the vectors it searches (sign-index.ts) and reads,
      // before a search, what changed since its last look. Written or rewritten rows carry the
      // writing transaction's id (tx); deleted ones are logged with theirs. A reader keeps the
      // snapshot it last read at, and asks for the transactions that snapshot did not see (at or
      // past its xmax, or in progress then): unlike a sequence, that misses no late commit.
      // Rows written before this migration have no tx; a process reads them when it first loads.
      await tx.query(`
        ALTER TABLE ${t('chunk_vectors')} ADD COLUMN tx xid8;
        ALTER TABLE ${t('chunk_vectors')} ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
        CREATE INDEX chunk_vectors_tx ON ${t('chunk_vectors')} (org_id, profile_id, tx) WHERE tx IS NOT NULL;
        CREATE TABLE ${t('chunk_vectors_gone')} (
          tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
          at timestamptz NOT NULL DEFAULT clock_timestamp(),
          org_id text COLLATE "C" NOT NULL,
          profile_id integer NOT NULL,
          document_id text COLLATE "C" NOT NULL,
          chunk_index integer NOT NULL
        );
        CREATE INDEX chunk_vectors_gone_tx ON ${t('chunk_vectors_gone')} (org_id, profile_id, tx);
        CREATE INDEX chunk_vectors_gone_at ON ${t('chunk_vectors_gone')} (at);
        CREATE FUNCTION ${t('log_chunk_vectors_gone')}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO ${t('chunk_vectors_gone')} (org_id, profile_id, document_id, chunk_index)
            SELECT org_id, profile_id, document_id, chunk_index FROM gone;
          -- The log keeps an hour (sign-index.ts reloads a partition idle for half of that). Old
          -- entries go a batch at a time with the deletions that follow them; SKIP LOCKED, so
          -- concurrent writers never wait on each other here.
          DELETE FROM ${t('chunk_vectors_gone')} WHERE ctid IN (
            SELECT ctid FROM ${t('chunk_vectors_gone')}
            WHERE at < clock_timestamp() - interval '1 hour'
            LIMIT 5000 FOR UPDATE SKIP LOCKED);
          RETURN NULL;
        END $$;
        CREATE TRIGGER chunk_vectors_gone_log AFTER DELETE ON ${t('chunk_vectors')}
          REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
          EXECUTE FUNCTION ${t('log_chunk_vectors_gone')}();
      `);
    },
  },
  {
    version: 110,
    name: 'vectors as float32 bytes',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // The exact cosine of a search's candidates moves out of SQL: sending their bytes and
      // multiplying in the API is cheaper than summing unnest(a, b) over the candidates. The
      // bytes are float4send's (big-endian IEEE 754), element after element; existing rows are
      // converted in place (the table is rewritten once).
      await tx.query(`
        CREATE FUNCTION ${t('real_array_bytes')}(v real[]) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS
          $fn$SELECT coalesce(string_agg(float4send(x), ''::bytea ORDER BY o), ''::bytea) FROM unnest(v) WITH ORDINALITY AS u(x, o)$fn$;
        ALTER TABLE ${t('chunk_vectors')} ALTER COLUMN embedding TYPE bytea USING ${t('real_array_bytes')}(embedding);
        DROP FUNCTION ${t('real_array_bytes')}(real[]);
      `);
    },
  },
  {
    version: 120,
    name: 'document languages',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // As in SQLite: the language a document was analysed in, the one ingest was given, and the
      // analyses each org's documents were written in (only added to).
      await tx.query(`
        ALTER TABLE ${t('documents')} ADD COLUMN IF NOT EXISTS language text;
        ALTER TABLE ${t('documents')} ADD COLUMN IF NOT EXISTS requested_language text;
        CREATE TABLE IF NOT EXISTS ${t('search_languages')} (
          org_id text NOT NULL,
          language text NOT NULL,
          PRIMARY KEY (org_id, language)
        );
      `);
    },
  },
  {
    version: 125,
    name: 'pending jobs by org',
    async apply(tx, db) {
      const documents = db.table('documents');
      // As in SQLite: a claim picks the org with the fewest running jobs, then its oldest due
      // job; these list each lane's orgs with pending jobs and give each org's oldest one.
      await tx.query(`
        CREATE INDEX IF NOT EXISTS documents_job_pending_download_org ON ${documents} (org_id, run_at)
          WHERE job_state = 'pending' AND fetch_url IS NOT NULL;
        CREATE INDEX IF NOT EXISTS documents_job_pending_process_org ON ${documents} (org_id, run_at)
          WHERE job_state = 'pending' AND fetch_url IS NULL;
      `);
    },
  },
  {
    version: 130,
    name: 'deletes that wait for no index write',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // A document deleted while an index write holds its row is marked (deleted_at, not a key
      // column, so marking does not wait for the write's KEY SHARE lock), hidden from every read
      // at once and removed by the write when it gives up, or by the reconciler's sweep
      // (document-store.ts). The partial index keeps that sweep off the rest of the table.
      await tx.query(`
        ALTER TABLE ${t('documents')} ADD COLUMN IF NOT EXISTS deleted_at timestamptz;
        CREATE INDEX IF NOT EXISTS documents_deleted ON ${t('documents')} (deleted_at) WHERE deleted_at IS NOT NULL;
      `);
    },
  },
  {
    version: 135,
    name: 'webhook backlog bound',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // As in SQLite: events dropped because the endpoint's backlog was full, and its messages
      // oldest first (the ones dropped).
      await tx.query(`
        ALTER TABLE ${t('webhook_endpoints')} ADD COLUMN IF NOT EXISTS dropped_messages integer NOT NULL DEFAULT 0;
        CREATE INDEX ON ${t('webhook_messages')} (endpoint_id, created_at);
      `);
    },
  },
];
