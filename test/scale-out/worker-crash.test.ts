// Durability (scale-out): one API and two `docindex worker` processes on PostgreSQL + BullMQ.
// While 1,000 documents are posted and processed, a worker is killed with SIGKILL three times at
// random moments (a fresh worker takes its place each time; the jobs each victim held are counted,
// and at least one must have held some). Afterwards every accepted document is `ready` with the
// chunk count of a clean run, and no (document_id, chunk_index) exists twice.
import { expect, it } from 'vitest';
import { chunkText } from '../../src/pipeline/chunk/chunker.js';
import { sleep } from '../contract/support.js';
import { startWorker, stopChild } from '../helpers/process.js';
import { syntheticDocument } from '../helpers/texts.js';
import { useDeployment } from './deployment.js';
import { checkServices, describeScaleOut } from './services.js';

const DOCS = 1_000;
const BATCH = 50;
const KILLS = 3;
const CHUNK = { chunkSize: 128, chunkOverlap: 16 };

const services = await checkServices(['DATABASE_URL', 'REDIS_URL']);

describeScaleOut('scale-out: SIGKILL of workers during a 1,000-document ingest', services, () => {
  const deployment = useDeployment(services, { apis: 1, workers: 2, env: { WORKER_CONCURRENCY: '4' } });
  const { env, apis, workers } = deployment;

  it('every accepted document ends ready with one set of chunks', async () => {
    const { api_key: key } = await deployment.createOrg('crash');
    const api = apis[0]!;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const texts = Array.from({ length: DOCS }, (_, i) => syntheticDocument(i));
    const accepted = new Map<string, number>();

    const posting = (async () => {
      for (let first = 0; first < DOCS; first += BATCH) {
        const res = await fetch(`${api.baseUrl}/v1/ingest`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            documents: texts.slice(first, first + BATCH).map((text) => ({ text })),
            ...{ chunk_size: CHUNK.chunkSize, chunk_overlap: CHUNK.chunkOverlap },
          }),
        });
        expect(res.status).toBe(202);
        const ids = ((await res.json()) as { document_ids: string[] }).document_ids;
        for (const [i, id] of ids.entries()) accepted.set(id, first + i);
      }
    })();
    const killed: { pid: number; held: number }[] = [];
    const killing = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await sleep(300 + Math.floor(Math.random() * 1_200));
        const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0]!;
        killed.push({ pid: victim.child.pid ?? 0, held: await deployment.freezeAndCount(victim) });
        await stopChild(victim.child, 'SIGKILL');
        workers.push(await startWorker(env));
      }
    })();
    await Promise.all([posting, killing]);
    expect(accepted.size).toBe(DOCS);

    const table = (name: string) => deployment.table(name);
    const deadline = Date.now() + 180_000;
    let unfinished = DOCS;
    while (Date.now() < deadline) {
      unfinished = Number(
        (
          await deployment.db.query(
            `SELECT count(*) AS n FROM ${table('documents')} WHERE status IN ('queued', 'processing')`,
          )
        ).rows[0].n,
      );
      if (unfinished === 0) break;
      await sleep(200);
    }
    expect(unfinished).toBe(0);

    const { rows } = await deployment.db.query<{
      id: string;
      status: string;
      chunk_count: number;
      rows: string;
    }>(
      `SELECT d.id, d.status, d.chunk_count,
              (SELECT count(*) FROM ${table('chunks')} c WHERE c.document_id = d.id) AS rows
       FROM ${table('documents')} d`,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const [id, index] of accepted) {
      const expected = chunkText(texts[index]!, CHUNK).chunks.length;
      expect(byId.get(id)).toMatchObject({ status: 'ready', chunk_count: expected });
      expect(Number(byId.get(id)!.rows)).toBe(expected);
    }
    const duplicates = (
      await deployment.db.query(
        `SELECT 1 FROM ${table('chunks')} GROUP BY document_id, chunk_index HAVING count(*) > 1`,
      )
    ).rowCount;
    const ready = rows.filter((r) => r.status === 'ready').length;
    const failed = rows.filter((r) => r.status === 'failed').length;
    const victims = killed.map((v) => `${v.pid} holding ${v.held}`).join(', ');
    console.log(
      `crash test (scale-out, ${KILLS} × SIGKILL of a worker: pid ${victims} job(s)): accepted ${accepted.size}, ` +
        `ready ${ready}, failed ${failed}, duplicate chunks ${duplicates}`,
    );
    // A kill between jobs would prove nothing: at least one victim died holding work.
    expect(killed.reduce((n, v) => n + v.held, 0)).toBeGreaterThan(0);
    expect(duplicates).toBe(0);
    expect(rows).toHaveLength(DOCS);
  }, 300_000);
});
