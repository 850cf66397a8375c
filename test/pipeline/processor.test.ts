// The document processor against real stores (SQLite, and PostgreSQL when DATABASE_URL is set):
// what a user reads on the document after runs that were cut off.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { PgDatabase } from '../../src/adapters/postgres/database.js';
import { PgDocumentStore } from '../../src/adapters/postgres/document-store.js';
import { PgKeywordIndex } from '../../src/adapters/postgres/keyword/index.js';
import { migratePostgres } from '../../src/adapters/postgres/migrations.js';
import { openSqlite } from '../../src/adapters/sqlite/database.js';
import { SqliteDocumentStore } from '../../src/adapters/sqlite/document-store.js';
import { SqliteKeywordIndex } from '../../src/adapters/sqlite/keyword/index.js';
import type {
  BlobStore,
  DocumentPipeline,
  DocumentStore,
  JobContext,
  JobQueue,
} from '../../src/domain/ports.js';
import { analyzer } from '../../src/domain/search-words.js';
import type { ChunkRow, ChunkStream, NewDocument } from '../../src/domain/types.js';
import { chunkForIndex, type IndexPlan } from '../../src/pipeline/chunk/for-index.js';
import { PipelineError } from '../../src/pipeline/errors.js';
import { DocumentProcessor } from '../../src/pipeline/processor.js';
import { jobDocument } from '../contract/job-document.js';
import { checkServices, describeScaleOut, dropSchema, freshSchema } from '../scale-out/services.js';

const english = analyzer('english');

interface Harness {
  documents: DocumentStore;
  close(): Promise<void>;
}

const unused = (what: string) => () => {
  throw new Error(`${what} is not used by text documents`);
};

type IndexText = DocumentPipeline['indexText'];

function processorOver(documents: DocumentStore, indexText: IndexText): DocumentProcessor {
  return new DocumentProcessor({
    documents,
    processQueue: { enqueue: unused('the process queue') } as unknown as JobQueue,
    blobs: {} as BlobStore,
    pipeline: { indexFile: unused('extraction'), indexText, downloadUrl: unused('download') },
    logger: { warn() {}, error() {} },
  });
}

/** A stream whose reading fails with `error`, as when chunking or extraction fails. */
function failingStream(error: Error): ChunkStream {
  return {
    chunks: {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<readonly ChunkRow[]>> => {
          throw error;
        },
      }),
    },
    totals: () => {
      throw error;
    },
  };
}

/** Chunks already made, as the stream the processor reads. */
function streamOf(plan: IndexPlan): ChunkStream {
  return {
    chunks: (async function* () {
      yield plan.chunks;
    })(),
    totals: () => ({ tokenCount: plan.tokenCount, contentSha256: plan.contentSha256 }),
  };
}

/** A text document in an org of its own, created in the store. */
async function created(documents: DocumentStore, text: string): Promise<NewDocument> {
  const doc = { ...jobDocument({ documentId: randomUUID(), orgId: `org_${randomUUID()}` }), text };
  await documents.createDocuments([doc]);
  return doc;
}

/** The queue's job for `doc`, on its `attempt`-th run. */
function jobOf(
  doc: NewDocument,
  attempt: number,
  maxAttempts = 5,
  signal = new AbortController().signal,
): JobContext {
  return { documentId: doc.id, orgId: doc.orgId, attempt, maxAttempts, signal };
}

const chunked: IndexText = (text, options) => streamOf(chunkForIndex(text, options, english));

function processorContract(name: string, make: () => Promise<Harness>): void {
  describe(name, () => {
    let h: Harness;
    afterEach(async () => {
      await h?.close();
    });
    const shown = (doc: NewDocument) => h.documents.getDocument(doc.orgId, doc.id);

    it('counts a run that was cut off (its worker died) in the document’s attempts', async () => {
      h = await make();
      const doc = await created(h.documents, 'the first run of this document never finished');

      // Run 1 stops half-way: its job is abandoned (as when a lease lapses) and never settles.
      const cutOff = new AbortController();
      const stuck = processorOver(h.documents, (_text, _options, signal) => ({
        chunks: {
          [Symbol.asyncIterator]: () => ({
            next: async (): Promise<IteratorResult<readonly ChunkRow[]>> => {
              cutOff.abort(new Error('the worker died'));
              throw signal.reason;
            },
          }),
        },
        totals: () => {
          throw new Error('never chunked');
        },
      }));
      await expect(stuck.handle(jobOf(doc, 1, 5, cutOff.signal))).rejects.toThrow('the worker died');
      expect(await shown(doc)).toMatchObject({ status: 'processing', attempts: 1 });

      // Run 2, the same job picked up again, finishes it.
      await processorOver(h.documents, chunked).handle(jobOf(doc, 2));
      expect(await shown(doc)).toMatchObject({ status: 'ready', attempts: 2 });
    });

    it('retries a transient failure while attempts remain, then ends failed with its code', async () => {
      h = await make();
      const doc = await created(h.documents, 'a document whose chunking keeps failing');
      // An error nobody classified (a database hiccup, a bug) is internal and transient.
      const flaky = processorOver(h.documents, () => failingStream(new Error('connection reset')));
      const error = { code: 'internal', message: 'processing failed: connection reset' };
      for (const attempt of [1, 2]) {
        await expect(flaky.handle(jobOf(doc, attempt, 3))).rejects.toMatchObject({
          code: 'internal',
          transient: true,
        });
        expect(await shown(doc)).toMatchObject({ status: 'queued', attempts: attempt, error });
      }
      // The last attempt records the failure instead of asking for another.
      await flaky.handle(jobOf(doc, 3, 3));
      expect(await shown(doc)).toMatchObject({ status: 'failed', attempts: 3, error });
    });

    it('ends failed at once on a permanent failure, whatever attempts remain', async () => {
      h = await make();
      const doc = await created(h.documents, 'a document that cannot be read');
      const broken = processorOver(h.documents, () =>
        failingStream(new PipelineError('corrupt', 'the file cannot be read')),
      );
      await broken.handle(jobOf(doc, 1));
      expect(await shown(doc)).toMatchObject({
        status: 'failed',
        attempts: 1,
        error: { code: 'corrupt', message: 'the file cannot be read' },
      });
    });

    it('counts one attempt for a run that the queue’s claim has already marked', async () => {
      h = await make();
      const doc = await created(h.documents, 'a document processed once');
      // A claim that marks the document itself (the SQLite table queue does) comes first.
      await h.documents.markProcessing(doc.id);
      await processorOver(h.documents, chunked).handle(jobOf(doc, 1));
      expect(await shown(doc)).toMatchObject({ status: 'ready', attempts: 1 });
    });
  });
}

processorContract('DocumentProcessor on SQLite', async () => {
  const db = openSqlite(':memory:');
  return {
    documents: new SqliteDocumentStore(db, { keyword: new SqliteKeywordIndex(db) }),
    async close() {
      db.close();
    },
  };
});

const services = await checkServices(['DATABASE_URL']);
describeScaleOut('DocumentProcessor on PostgreSQL', services, () => {
  processorContract('PgDocumentStore', async () => {
    const url = services.urls.DATABASE_URL ?? '';
    const schema = freshSchema();
    const db = new PgDatabase({ connectionString: url, schema, maxConnections: 4 });
    await migratePostgres(db);
    return {
      documents: new PgDocumentStore(db, undefined, { keyword: new PgKeywordIndex(db) }),
      async close() {
        await db.close();
        await dropSchema(url, schema);
      },
    };
  });
});
