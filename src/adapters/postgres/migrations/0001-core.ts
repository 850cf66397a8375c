// PostgreSQL migrations 1 to 4: the initial schema (orgs, keys, documents with their jobs, chunks,
// usage, idempotency keys, the rate limiter's table), blobs, search analysis, key scopes.
import type { Queryable } from '../database.js';
import { type Migration, RATE_LIMIT_TABLE } from './migration.js';

/**
 * Installs btree_gin when it is available and allowed, so one GIN index can hold the org id next
 * to the tsvector. Created in `public` rather than in docindex's schema: an extension is
 * database-wide, and dropping one docindex schema must never take the opclass from under another.
 * Returns whether btree_gin is usable.
 */
async function ensureBtreeGin(tx: Queryable): Promise<boolean> {
  const installed = await tx.query(`SELECT 1 FROM pg_extension WHERE extname = 'btree_gin'`);
  if (installed.rowCount) return true;
  await tx.query('SAVEPOINT btree_gin');
  try {
    await tx.query('CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public');
    await tx.query('RELEASE SAVEPOINT btree_gin');
    return true;
  } catch {
    // Not installed on the server, or no privilege: the fallback index layout below works too.
    await tx.query('ROLLBACK TO SAVEPOINT btree_gin');
    return false;
  }
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // Ids compare bytewise (COLLATE "C") as in SQLite, so list order and cursors do not depend
      // on the database's locale.
      await tx.query(`
        CREATE TABLE ${t('orgs')} (
          id text COLLATE "C" PRIMARY KEY,
          name text NOT NULL,
          rate_limit_rpm integer NOT NULL,
          created_at timestamptz NOT NULL
        );

        CREATE TABLE ${t('api_keys')} (
          id text COLLATE "C" PRIMARY KEY,
          org_id text COLLATE "C" NOT NULL REFERENCES ${t('orgs')} (id) ON DELETE CASCADE,
          hash text NOT NULL UNIQUE,
          prefix text NOT NULL,
          created_at timestamptz NOT NULL,
          revoked_at timestamptz
        );
        CREATE INDEX api_keys_org ON ${t('api_keys')} (org_id);

        -- A document row is also its job for PgTableQueue (job_* columns), so "document and job
        -- committed together" holds by construction. Under BullMQ the job columns stay 'done'.
        -- No foreign key to orgs: the document port cannot create orgs, and orgs are never deleted.
        CREATE TABLE ${t('documents')} (
          id text COLLATE "C" PRIMARY KEY,
          org_id text COLLATE "C" NOT NULL,
          status text NOT NULL CHECK (status IN ('queued', 'processing', 'ready', 'failed')),
          source_type text NOT NULL CHECK (source_type IN ('text', 'file', 'url')),
          filename text,
          source_url text,
          content_type text,
          bytes bigint,
          metadata jsonb NOT NULL,
          chunk_size integer NOT NULL,
          chunk_overlap integer NOT NULL,
          tokenizer text NOT NULL,
          chunk_count integer,
          token_count bigint,
          content_sha256 text,
          error_code text,
          error_message text,
          attempts integer NOT NULL DEFAULT 0,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          input_text text,
          blob_key text,
          fetch_url text,
          job_state text NOT NULL CHECK (job_state IN ('pending', 'leased', 'done')),
          run_at timestamptz NOT NULL DEFAULT clock_timestamp(),
          lease_owner text,
          lease_until timestamptz,
          job_attempts integer NOT NULL DEFAULT 0
        );
        CREATE INDEX documents_org_created ON ${t('documents')} (org_id, created_at DESC, id DESC);
        CREATE INDEX documents_org_status_created ON ${t('documents')} (org_id, status, created_at DESC, id DESC);
        CREATE INDEX documents_org_sha ON ${t('documents')} (org_id, content_sha256)
          WHERE content_sha256 IS NOT NULL;
        -- Partial indexes: finished documents (nearly all rows) stay out of the hot queue indexes.
        CREATE INDEX documents_unfinished ON ${t('documents')} (status) WHERE status IN ('queued', 'processing');
        CREATE INDEX documents_queued_updated ON ${t('documents')} (updated_at) WHERE status = 'queued';
        CREATE INDEX documents_job_pending ON ${t('documents')} (run_at) WHERE job_state = 'pending';
        CREATE INDEX documents_job_leased ON ${t('documents')} (lease_until) WHERE job_state = 'leased';

        -- org_id is copied from the document so the full-text index can restrict to one org
        -- itself: a query never ranks other tenants' rows and then throws them away.
        CREATE TABLE ${t('chunks')} (
          document_id text COLLATE "C" NOT NULL REFERENCES ${t('documents')} (id) ON DELETE CASCADE,
          chunk_index integer NOT NULL,
          org_id text COLLATE "C" NOT NULL,
          text text NOT NULL,
          token_count integer NOT NULL,
          char_start integer NOT NULL,
          char_end integer NOT NULL,
          page_start integer,
          page_end integer,
          -- 'simple': lower-cased words, no stemming and no stop words, like the embedded FTS5
          -- index (unicode61), so both deployments match the same words.
          tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, text)) STORED,
          PRIMARY KEY (document_id, chunk_index)
        );

        CREATE TABLE ${t('usage_daily')} (
          org_id text COLLATE "C" NOT NULL,
          day text COLLATE "C" NOT NULL,
          count bigint NOT NULL,
          PRIMARY KEY (org_id, day)
        );

        -- Idempotency-Key records: one row per org and key, replaced once expired or abandoned.
        CREATE TABLE ${t('idempotency_keys')} (
          org_id text COLLATE "C" NOT NULL,
          key text COLLATE "C" NOT NULL,
          fingerprint text NOT NULL,
          state text NOT NULL CHECK (state IN ('in_flight', 'done')),
          status integer,
          body text,
          created_at timestamptz NOT NULL,
          PRIMARY KEY (org_id, key)
        );
        CREATE INDEX idempotency_keys_created ON ${t('idempotency_keys')} (created_at);

        CREATE TABLE ${t(RATE_LIMIT_TABLE)} (
          key varchar(255) PRIMARY KEY,
          points integer NOT NULL DEFAULT 0,
          expire bigint
        );
      `);
      if (await ensureBtreeGin(tx)) {
        // One bitmap scan answers "this org's chunks containing these words".
        await tx.query(`CREATE INDEX chunks_org_tsv ON ${t('chunks')} USING gin (org_id, tsv)`);
      } else {
        // Without btree_gin the planner ANDs two bitmaps: the words' and the org's.
        await tx.query(`CREATE INDEX chunks_tsv ON ${t('chunks')} USING gin (tsv)`);
        await tx.query(`CREATE INDEX chunks_org ON ${t('chunks')} (org_id)`);
      }
    },
  },
  {
    version: 2,
    name: 'blobs',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // PgBlobStore (BLOB_STORE=postgres): a blob is a row that turns `complete` after its last
      // chunk row, so readers never see a partial file while the upload holds no transaction (or
      // connection) open for its whole duration. Rows left incomplete by a process that died are
      // swept after a day.
      await tx.query(`
        CREATE TABLE ${t('blobs')} (
          key text COLLATE "C" PRIMARY KEY,
          complete boolean NOT NULL DEFAULT false,
          bytes bigint,
          sha256 text,
          chunks integer,
          created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX blobs_incomplete ON ${t('blobs')} (created_at) WHERE NOT complete;

        CREATE TABLE ${t('blob_chunks')} (
          key text COLLATE "C" NOT NULL REFERENCES ${t('blobs')} (key) ON DELETE CASCADE,
          seq integer NOT NULL,
          data bytea NOT NULL,
          PRIMARY KEY (key, seq)
        );
        -- Out of line and uncompressed: PDFs and Office files are compressed already, and pglz
        -- would spend CPU on every chunk to save nothing.
        ALTER TABLE ${t('blob_chunks')} ALTER COLUMN data SET STORAGE EXTERNAL;
      `);
    },
  },
  {
    version: 3,
    name: 'search analysis',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // The words of a chunk are now computed by docindex (domain/search-words.ts: folding and,
      // by default, English stemming), exactly as the embedded index computes them, and written
      // as the tsvector. Dropping the expression keeps every existing row's vector (no rewrite);
      // those rows are 'legacy' until "docindex reindex" rewrites them.
      await tx.query(`
        ALTER TABLE ${t('chunks')} ALTER COLUMN tsv DROP EXPRESSION;
        CREATE TABLE ${t('search_analysis')} (
          id boolean PRIMARY KEY DEFAULT true CHECK (id),
          written text,
          reindex_target text,
          reindex_after_document text COLLATE "C",
          reindex_after_chunk integer
        );
        INSERT INTO ${t('search_analysis')} (written)
          SELECT CASE WHEN EXISTS (SELECT FROM ${t('chunks')}) THEN 'legacy' END;
      `);
    },
  },
  {
    version: 4,
    name: 'key scopes and expiry',
    async apply(tx, db) {
      const keys = db.table('api_keys');
      // Keys made before scopes existed keep every scope; new keys always name theirs.
      await tx.query(`
        ALTER TABLE ${keys} ADD COLUMN scopes text NOT NULL DEFAULT 'ingest,query,read,write,webhooks';
        ALTER TABLE ${keys} ALTER COLUMN scopes DROP DEFAULT;
        ALTER TABLE ${keys} ADD COLUMN expires_at timestamptz;
      `);
    },
  },
];
