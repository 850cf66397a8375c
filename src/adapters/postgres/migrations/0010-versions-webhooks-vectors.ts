// PostgreSQL migrations 10 to 60: document versions and external ids, webhooks, chunk vectors and
// the vector stage's state, OCR page counts, the RUM keyword index.
import { ensureRum, rumIndexStatement } from '../rum-index.js';
import type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 10,
    name: 'external ids and versions',
    async apply(tx, db) {
      const documents = db.table('documents');
      // As in SQLite (sqlite/migrations/, version 10): the caller's key, unique per org, and a pending
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
];
