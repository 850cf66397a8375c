// Versioned schema of the scale-out database, applied by `docindex migrate` and by every process on
// start. Several processes may start at once: a database-wide advisory lock makes one of them
// apply what is missing while the others wait, then find nothing left to do.
import type { QueryResultRow } from 'pg';
import type { PgDatabase, Queryable } from './database.js';

interface Migration {
  version: number;
  name: string;
  apply(tx: Queryable, db: PgDatabase, options: MigrateOptions): Promise<void>;
}

/** Every docindex process of every schema in this database takes the same lock (see btree_gin). */
const MIGRATION_LOCK_KEY = 'docindex:migrate';

/** Table of rate-limiter-flexible's PostgreSQL store (same columns as the library creates). */
export const RATE_LIMIT_TABLE = 'rate_limits';

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

/**
 * Installs the RUM extension (Debian `postgresql-15-rum`) when the server has it and the role may,
 * in `public` like btree_gin. Returns whether RUM is usable.
 */
export async function ensureRum(tx: Queryable): Promise<boolean> {
  const installed = await tx.query(`SELECT 1 FROM pg_extension WHERE extname = 'rum'`);
  if (installed.rowCount) return true;
  await tx.query('SAVEPOINT rum');
  try {
    await tx.query('CREATE EXTENSION IF NOT EXISTS rum SCHEMA public');
    await tx.query('RELEASE SAVEPOINT rum');
    return true;
  } catch {
    // Not installed on the server, or no privilege: keyword search stays on the GIN index.
    await tx.query('ROLLBACK TO SAVEPOINT rum');
    return false;
  }
}

/** The RUM index over the org-prefixed terms (built by migration 60 or by `docindex reindex`). */
export const RUM_INDEX = 'chunks_terms_rum';

/** The statement building the RUM index, plain or CONCURRENTLY. */
export function rumIndexStatement(db: PgDatabase, concurrently: boolean): string {
  return `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${RUM_INDEX}
    ON ${db.table('chunks')} USING rum (terms public.rum_tsvector_ops)`;
}

export interface MigrateOptions {
  /** Whether to use RUM when the server has it (default true); false keeps keyword search on GIN. */
  rum?: boolean;
  /** Stop after this version (tests of a migration over data written by the versions before it). */
  upTo?: number;
}

// Append only: a migration that has shipped is never edited, because databases in the field have
// already recorded its version and will not run it again.
const MIGRATIONS: readonly Migration[] = [
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
  {
    version: 10,
    name: 'external ids and versions',
    async apply(tx, db) {
      const documents = db.table('documents');
      // As in SQLite (database.ts, version 10): the caller's key, unique per org, and a pending
      // version beside the current one (pending: its source, chunk settings, blob and error).
      await tx.query(`
        ALTER TABLE ${documents} ADD COLUMN external_id text COLLATE "C";
        CREATE UNIQUE INDEX documents_org_external ON ${documents} (org_id, external_id)
          WHERE external_id IS NOT NULL;
        ALTER TABLE ${documents} ADD COLUMN version integer NOT NULL DEFAULT 1;
        ALTER TABLE ${documents} ADD COLUMN pending_version integer;
        ALTER TABLE ${documents} ADD COLUMN pending_status text
          CHECK (pending_status IN ('queued', 'processing', 'failed'));
        ALTER TABLE ${documents} ADD COLUMN pending jsonb;
        CREATE INDEX documents_pending_unfinished ON ${documents} (updated_at)
          WHERE pending_status IN ('queued', 'processing');
      `);
    },
  },
  {
    version: 20,
    name: 'webhooks',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // Endpoints, the outbox (one row per event and endpoint, written in the transaction of the
      // status change, removed once delivered or given up; payload is the status record as that
      // change left it, NULL for a test message) and the delivery log (newest attempts kept).
      // events is comma-separated, matched as ',type,' in ',events,' as on SQLite.
      await tx.query(`
        CREATE TABLE ${t('webhook_endpoints')} (
          id text PRIMARY KEY,
          org_id text NOT NULL,
          url text NOT NULL,
          events text NOT NULL,
          description text,
          secret text NOT NULL,
          created_at timestamptz NOT NULL,
          disabled_at timestamptz,
          disabled_reason text,
          failing_since timestamptz
        );
        CREATE INDEX ON ${t('webhook_endpoints')} (org_id, created_at);
        CREATE TABLE ${t('webhook_messages')} (
          id text PRIMARY KEY,
          endpoint_id text NOT NULL REFERENCES ${t('webhook_endpoints')}(id) ON DELETE CASCADE,
          org_id text NOT NULL,
          event_type text NOT NULL,
          document_id text,
          payload jsonb,
          created_at timestamptz NOT NULL,
          next_attempt_at timestamptz NOT NULL,
          attempts integer NOT NULL DEFAULT 0,
          lease_owner text,
          lease_until timestamptz
        );
        CREATE INDEX ON ${t('webhook_messages')} (next_attempt_at);
        CREATE INDEX ON ${t('webhook_messages')} (endpoint_id);
        CREATE INDEX ON ${t('webhook_messages')} (created_at);
        CREATE TABLE ${t('webhook_attempts')} (
          id bigserial PRIMARY KEY,
          endpoint_id text NOT NULL REFERENCES ${t('webhook_endpoints')}(id) ON DELETE CASCADE,
          org_id text NOT NULL,
          message_id text NOT NULL,
          event_type text NOT NULL,
          attempt integer NOT NULL,
          status_code integer,
          duration_ms integer NOT NULL,
          error text,
          outcome text NOT NULL,
          at timestamptz NOT NULL
        );
        CREATE INDEX ON ${t('webhook_attempts')} (endpoint_id, id);
      `);
    },
  },
  {
    version: 30,
    name: 'chunk vectors',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // A vector belongs to its chunk (ON DELETE CASCADE): deleting or replacing a document's
      // chunks removes their vectors in the same transaction. `signs` holds one bit per
      // dimension (set when the value is positive): Hamming distance over it (bit_count(a # b))
      // picks candidates cheaply, and the exact cosine over `embedding` ranks them.
      await tx.query(`
        CREATE TABLE ${t('vector_profiles')} (
          id serial PRIMARY KEY,
          provider text NOT NULL,
          model text NOT NULL,
          dimensions integer NOT NULL,
          UNIQUE (provider, model, dimensions)
        );
        CREATE TABLE ${t('chunk_vectors')} (
          document_id text COLLATE "C" NOT NULL,
          chunk_index integer NOT NULL,
          profile_id integer NOT NULL REFERENCES ${t('vector_profiles')} (id),
          org_id text COLLATE "C" NOT NULL,
          embedding real[] NOT NULL,
          signs bit varying NOT NULL,
          PRIMARY KEY (document_id, chunk_index, profile_id),
          FOREIGN KEY (document_id, chunk_index) REFERENCES ${t('chunks')} (document_id, chunk_index) ON DELETE CASCADE
        );
        CREATE INDEX ON ${t('chunk_vectors')} (org_id, profile_id);
      `);
    },
  },
  {
    version: 31,
    name: 'vector stage state',
    async apply(tx, db) {
      const t = (name: string) => db.table(name);
      // The second stage of a ready document, per profile: no row means pending (never tried);
      // 'pending' with an error means waiting out a provider outage until next_attempt_at.
      // Chunks replaced (a re-chunk, a new version) take their vectors with them (cascade) and
      // the document's vector state too (the trigger), so the stage embeds the new chunks.
      await tx.query(`
        CREATE TABLE ${t('document_vectors')} (
          document_id text COLLATE "C" NOT NULL REFERENCES ${t('documents')} (id) ON DELETE CASCADE,
          profile_id integer NOT NULL REFERENCES ${t('vector_profiles')} (id),
          org_id text COLLATE "C" NOT NULL,
          status text NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
          error_code text,
          error_message text,
          attempts integer NOT NULL DEFAULT 0,
          next_attempt_at timestamptz NOT NULL DEFAULT '-infinity',
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (document_id, profile_id)
        );
        CREATE INDEX ON ${t('document_vectors')} (profile_id, status, next_attempt_at);
        CREATE FUNCTION ${t('forget_vector_state')}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          DELETE FROM ${t('document_vectors')} v USING (SELECT DISTINCT document_id FROM gone) g
            WHERE v.document_id = g.document_id;
          RETURN NULL;
        END $$;
        CREATE TRIGGER chunks_vector_state_delete AFTER DELETE ON ${t('chunks')}
          REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION ${t('forget_vector_state')}();
      `);
    },
  },
  {
    version: 40,
    name: 'pages recognised by OCR',
    async apply(tx, db) {
      // Null for documents indexed before OCR existed and for formats that never need it.
      await tx.query(`ALTER TABLE ${db.table('documents')} ADD COLUMN ocr_pages integer`);
    },
  },
  {
    version: 60,
    name: 'rum keyword index',
    async apply(tx, db, options) {
      const t = (name: string) => db.table(name);
      // `terms`: the chunk's words prefixed with its org's key ("<key>_<word>", positions kept), as
      // the embedded index writes its FTS5 terms, so each org has posting lists of its own in one
      // RUM index. Written for every new chunk (whether or not RUM is installed, so installing it
      // later needs no race-prone switch-over); older rows are filled by `docindex reindex`, which
      // then builds the index CONCURRENTLY. Until `terms_ready`, search uses the GIN index. Its
      // statistics target is raised: the most common terms' frequencies (pg_stats) stand in for
      // the document frequencies of words too common to count (keyword/rum-search.ts).
      await tx.query(`
        ALTER TABLE ${t('chunks')} ADD COLUMN terms tsvector;
        ALTER TABLE ${t('chunks')} ALTER COLUMN terms SET STATISTICS 1000;
        CREATE TABLE ${t('search_org_keys')} (
          org_id text COLLATE "C" PRIMARY KEY,
          key integer GENERATED ALWAYS AS IDENTITY UNIQUE
        );
        ALTER TABLE ${t('search_analysis')}
          ADD COLUMN terms_ready boolean NOT NULL DEFAULT false,
          ADD COLUMN terms_after_document text COLLATE "C",
          ADD COLUMN terms_after_chunk integer;
      `);
      // An empty table gets its index now; a filled one waits for `docindex reindex` (online)
      // rather than holding a lock on the chunks for the length of a build at start.
      const empty = !(await tx.query(`SELECT FROM ${t('chunks')} LIMIT 1`)).rowCount;
      if (options.rum !== false && empty && (await ensureRum(tx))) {
        await tx.query(rumIndexStatement(db, false));
        await tx.query(`UPDATE ${t('search_analysis')} SET terms_ready = true`);
      }
    },
  },
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
];

/** The newest schema version this code knows. */
export const PG_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** Every version this code applies, in order (not necessarily consecutive). */
export const PG_SCHEMA_VERSIONS: readonly number[] = MIGRATIONS.map((m) => m.version);

/** Creates the schema if needed and applies every migration not yet recorded. */
export async function migratePostgres(
  db: PgDatabase,
  options: MigrateOptions = {},
): Promise<{ applied: number[] }> {
  const applied: number[] = [];
  const client = await db.connect();
  const tx: Queryable = {
    query: <R extends QueryResultRow>(sql: string, params?: unknown[]) => client.query<R>(sql, params),
  };
  let broken = false;
  try {
    // A session lock on a dedicated connection: it must span several transactions. One key for
    // the whole database because CREATE EXTENSION and CREATE SCHEMA race across schemas too.
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    try {
      // Checked first: CREATE SCHEMA IF NOT EXISTS still needs CREATE on the database, which a
      // role given a ready-made schema may not have.
      const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [db.schema]);
      if (!exists.rowCount) await client.query(`CREATE SCHEMA ${db.quotedSchema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${db.table('schema_migrations')} (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = new Set(
        (
          await client.query<{ version: number }>(`SELECT version FROM ${db.table('schema_migrations')}`)
        ).rows.map((r) => Number(r.version)),
      );
      for (const m of MIGRATIONS) {
        if (done.has(m.version) || (options.upTo !== undefined && m.version > options.upTo)) continue;
        await client.query('BEGIN');
        try {
          await m.apply(tx, db, options);
          await client.query(`INSERT INTO ${db.table('schema_migrations')} (version, name) VALUES ($1, $2)`, [
            m.version,
            m.name,
          ]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
        applied.push(m.version);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    }
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    // A connection that failed mid-migration may still hold the lock: close it rather than reuse it.
    client.release(broken);
  }
  return { applied };
}
