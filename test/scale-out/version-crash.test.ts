// Durability of version swaps (scale-out): one API and two `docindex worker` processes on
// PostgreSQL + BullMQ. 200 documents with external ids are ingested and indexed, then all 200 are
// re-ingested as version 2 while a worker is killed with SIGKILL twice (a fresh one takes its place
// each time). Afterwards every document answers as version 2 only: its chunks are the new text's,
// chunk_count matches its chunk rows, the old text matches nothing, and no pending version is left.
import { expect, it } from 'vitest';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';
import { sleep } from '../contract/support.js';
import { startWorker, stopChild } from '../helpers/process.js';
import { syntheticDocument } from '../helpers/texts.js';
import { useDeployment } from './deployment.js';
import { checkServices, describeScaleOut } from './services.js';

const DOCS = 200;
const KILLS = 2;
const CHUNK = { chunkSize: 128, chunkOverlap: 16 };
const textOf = (i: number, v: number) => `${v === 1 ? 'oldmarker' : 'newmarker'} ${syntheticDocument(i)}`;

const services = await checkServices(['DATABASE_URL', 'REDIS_URL']);

describeScaleOut('scale-out: SIGKILL of workers while 200 documents get a new version', services, () => {
  const deployment = useDeployment(services, { apis: 1, workers: 2, env: { WORKER_CONCURRENCY: '4' } });
  const { env, apis, workers } = deployment;

  it('leaves exactly one version answering for every document, with one set of chunks', async () => {
    const { api_key: key } = await deployment.createOrg('versions');
    const api = apis[0]!;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const table = (name: string) => deployment.table(name);
    const ingest = async (version: number) => {
      const ids: string[] = [];
      for (let first = 0; first < DOCS; first += 50) {
        const documents = Array.from({ length: 50 }, (_, k) => ({
          text: textOf(first + k, version),
          external_id: `doc-${first + k}`,
        }));
        const res = await fetch(`${api.baseUrl}/v1/ingest`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ documents, chunk_size: CHUNK.chunkSize, chunk_overlap: CHUNK.chunkOverlap }),
        });
        expect(res.status).toBe(202);
        ids.push(...((await res.json()) as { document_ids: string[] }).document_ids);
      }
      return ids;
    };
    const waitFor = async (version: number) => {
      const deadline = Date.now() + 180_000;
      let left = DOCS;
      while (Date.now() < deadline) {
        left = Number(
          (
            await deployment.db.query(
              `SELECT count(*) AS n FROM ${table('documents')}
               WHERE NOT (status = 'ready' AND version = $1 AND pending_version IS NULL)`,
              [version],
            )
          ).rows[0].n,
        );
        if (left === 0) return;
        await sleep(200);
      }
      throw new Error(`${left} documents did not reach version ${version}`);
    };

    const ids = await ingest(1);
    await waitFor(1);
    const killing = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await sleep(200 + Math.floor(Math.random() * 800));
        const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0]!;
        await stopChild(victim.child, 'SIGKILL');
        workers.push(await startWorker(env));
      }
    })();
    expect(await ingest(2)).toEqual(ids);
    await killing;
    await waitFor(2);

    const { rows } = await deployment.db.query<{
      id: string;
      external_id: string;
      chunk_count: number;
      rows: string;
      old: string;
    }>(
      `SELECT d.id, d.external_id, d.chunk_count,
              (SELECT count(*) FROM ${table('chunks')} c WHERE c.document_id = d.id) AS rows,
              (SELECT count(*) FROM ${table('chunks')} c WHERE c.document_id = d.id AND c.text LIKE 'oldmarker%') AS old
       FROM ${table('documents')} d`,
    );
    expect(rows).toHaveLength(DOCS);
    for (const row of rows) {
      const i = Number(row.external_id.slice('doc-'.length));
      const expected = chunkText(textOf(i, 2), CHUNK).chunks.length;
      expect(row.chunk_count).toBe(expected);
      expect(Number(row.rows)).toBe(expected);
      expect(Number(row.old)).toBe(0);
    }
    const oldHits = await fetch(`${api.baseUrl}/v1/query`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: 'oldmarker', top_k: 100 }),
    });
    expect(((await oldHits.json()) as { results: unknown[] }).results).toEqual([]);
    const duplicates = (
      await deployment.db.query(
        `SELECT 1 FROM ${table('chunks')} GROUP BY document_id, chunk_index HAVING count(*) > 1`,
      )
    ).rowCount;
    console.log(
      `version crash test (scale-out, ${KILLS} × SIGKILL of a worker): documents ${rows.length}, all version 2, duplicate chunks ${duplicates}`,
    );
    expect(duplicates).toBe(0);
  }, 300_000);
});
