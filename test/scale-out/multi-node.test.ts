// The multi-node drill: 2 × `serve --no-worker` and 2 × `docindex worker`, each process with an
// empty folder of its own (as on four machines) and BLOB_STORE=postgres, so nothing is shared but
// PostgreSQL and Redis. Files and URLs are ingested through one API while a worker is killed with
// SIGKILL and replaced by a fresh one; through the other API every document is then ready, its
// original file comes back byte for byte, its text reads back, and queries find it; no chunk is
// duplicated and no process wrote a file of its own.
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep } from '../contract/support.js';
import { multipart } from '../helpers/multipart.js';
import { startWorker } from '../helpers/process.js';
import { syntheticDocument } from '../helpers/texts.js';
import { useDeployment } from './deployment.js';
import { checkServices, describeScaleOut } from './services.js';

const UPLOADS = 120;
const DOWNLOADS = 30;
/** A worker is killed once this many documents are ready. */
const KILL_AFTER_READY = 30;
const FIXTURES = new URL('../fixtures/extract/', import.meta.url);

const services = await checkServices(['DATABASE_URL', 'REDIS_URL']);

/** A word no other document holds, so a query for it must answer with exactly this document. */
const marker = (kind: string, i: number) => `${kind}marker${i}x`;

describeScaleOut(
  'scale-out: the multi-node drill (nothing shared but PostgreSQL and Redis)',
  services,
  () => {
    const origin = http.createServer((req, res) => {
      const pathname = new URL(req.url ?? '/', 'http://origin').pathname;
      const match = /^\/files\/notes-(\d+)\.txt$/.exec(pathname);
      if (match) {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return res.end(downloadText(Number(match[1])));
      }
      if (pathname === '/files/report.pdf') {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        return res.end(readFileSync(new URL('hyphenation.pdf', FIXTURES)));
      }
      res.writeHead(404).end();
    });
    let originUrl = '';
    beforeAll(async () => {
      await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
      originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
      deployment.env.URL_FETCH_ALLOW = `127.0.0.1:${(origin.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => origin.close(() => resolve())));

    const deployment = useDeployment(services, {
      apis: 2,
      workers: 2,
      isolated: true,
      env: { BLOB_STORE: 'postgres', WORKER_CONCURRENCY: '4', UNAUTHENTICATED_RATE_LIMIT_RPM: '1000000' },
    });
    const { apis, workers } = deployment;
    const table = (name: string) => deployment.table(name);

    it('ingests through one node, reads back and queries through another, across a worker’s SIGKILL', async () => {
      const org = await deployment.createOrg('drill');
      const auth = { authorization: `Bearer ${org.api_key}` };
      const [intake, reader] = [apis[0]!, apis[1]!];

      // ---- ingest through the first API: text files, a PDF, a DOCX, and URLs ----
      const uploads = new Map<
        string,
        { bytes: Buffer; filename: string; text: string | null; word: string | null }
      >();
      const upload = async (
        bytes: Buffer,
        filename: string,
        text: string | null,
        word: string | null = null,
      ) => {
        const { payload, contentType } = await multipart([{ name: 'file', value: bytes, filename }]);
        const res = await fetch(`${intake.baseUrl}/v1/ingest/file`, {
          method: 'POST',
          headers: { ...auth, 'content-type': contentType },
          body: payload,
        });
        expect(res.status, await res.clone().text()).toBe(202);
        const id = ((await res.json()) as { document_ids: string[] }).document_ids[0]!;
        uploads.set(id, { bytes, filename, text, word });
      };
      const downloads = new Map<string, number | 'pdf'>();
      const ingestUrl = async (url: string, which: number | 'pdf') => {
        const res = await fetch(`${intake.baseUrl}/v1/ingest/url`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ url }),
        });
        expect(res.status, await res.clone().text()).toBe(202);
        downloads.set(((await res.json()) as { document_ids: string[] }).document_ids[0]!, which);
      };
      let next = 0;
      const poster = async () => {
        while (next < UPLOADS) {
          const i = next++;
          const text = `${syntheticDocument(i)} ${marker('upload', i)}\n`;
          await upload(Buffer.from(text), `notes ${i}.txt`, text, marker('upload', i));
          if (i < DOWNLOADS) await ingestUrl(`${originUrl}/files/notes-${i}.txt?sig=secret`, i);
        }
      };
      const posting = Promise.all([
        ...Array.from({ length: 4 }, poster),
        upload(readFileSync(new URL('hyphenation.pdf', FIXTURES)), 'hyphenation.pdf', null),
        upload(readFileSync(new URL('pandoc-notes.docx', FIXTURES)), 'pandoc-notes.docx', null),
        ingestUrl(`${originUrl}/files/report.pdf`, 'pdf'),
      ]);
      const total = UPLOADS + 2 + DOWNLOADS + 1;

      const readyCount = async () =>
        Number(
          (
            await deployment.db.query(
              `SELECT count(*) AS n FROM ${table('documents')} WHERE status = 'ready'`,
            )
          ).rows[0].n,
        );

      // ---- kill a worker while it holds jobs; a fresh node with an empty folder replaces it ----
      const victim = workers[0]!;
      let heldAtKill = 0;
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        if ((await readyCount()) >= KILL_AFTER_READY) {
          heldAtKill = await deployment.freezeAndCount(victim);
          if (heldAtKill > 0) break;
          victim.child.kill('SIGCONT');
        }
        await sleep(10);
      }
      expect(heldAtKill).toBeGreaterThan(0);
      victim.child.kill('SIGKILL');
      workers[0] = await startWorker(deployment.processEnv());
      await posting;

      // ---- through the other API: everything ends ready ----
      const ids = [...uploads.keys(), ...downloads.keys()];
      expect(ids).toHaveLength(total);
      const statusOf = async () => {
        const records: { id: string; status: string; chunk_count: number; error: unknown }[] = [];
        for (let i = 0; i < ids.length; i += 100) {
          const res = await fetch(
            `${reader.baseUrl}/v1/documents?limit=100&ids=${ids.slice(i, i + 100).join(',')}`,
            { headers: auth },
          );
          records.push(...((await res.json()) as { documents: typeof records }).documents);
        }
        return records;
      };
      let records = await statusOf();
      while (
        Date.now() < deadline + 60_000 &&
        records.some((r) => r.status !== 'ready' && r.status !== 'failed')
      ) {
        await sleep(200);
        records = await statusOf();
      }
      expect(records.filter((r) => r.status !== 'ready')).toEqual([]);

      // ---- originals byte for byte, text read back, and queries, all through the other API ----
      for (const [id, sent] of uploads) {
        const file = await fetch(`${reader.baseUrl}/v1/documents/${id}/file`, { headers: auth });
        expect(file.status).toBe(200);
        expect(Buffer.from(await file.arrayBuffer()).equals(sent.bytes), sent.filename).toBe(true);
        expect(file.headers.get('content-disposition')).toContain(encodeURIComponent(sent.filename));
        if (sent.text === null) continue;
        const content = await fetch(`${reader.baseUrl}/v1/documents/${id}/content`, { headers: auth });
        expect(await content.text()).toBe(sent.text);
      }
      for (const [id, which] of downloads) {
        const file = await fetch(`${reader.baseUrl}/v1/documents/${id}/file`, { headers: auth });
        expect(file.status).toBe(200);
        const bytes = Buffer.from(await file.arrayBuffer());
        if (which === 'pdf') {
          expect(bytes.equals(readFileSync(new URL('hyphenation.pdf', FIXTURES)))).toBe(true);
          expect(file.headers.get('content-disposition')).toContain('report.pdf');
        } else {
          expect(bytes.toString('utf8')).toBe(downloadText(which));
          expect(file.headers.get('content-disposition')).toContain(`notes-${which}.txt`);
        }
      }
      const queries: [string, string][] = [
        ...[...uploads].flatMap(([id, sent]) =>
          sent.word === null ? [] : [[id, sent.word] as [string, string]],
        ),
        ...[...downloads].flatMap(([id, which]) =>
          which === 'pdf' ? [] : [[id, marker('download', which)] as [string, string]],
        ),
      ];
      for (const [id, word] of queries) {
        const res = await fetch(`${reader.baseUrl}/v1/query`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ query: word, top_k: 3 }),
        });
        const hits = ((await res.json()) as { results: { document_id: string }[] }).results;
        expect(
          hits.map((h) => h.document_id),
          word,
        ).toEqual([id]);
      }

      // ---- no duplicate chunk; every document holds exactly its chunk count ----
      const { rows: duplicates } = await deployment.db.query(
        `SELECT document_id, chunk_index FROM ${table('chunks')} GROUP BY 1, 2 HAVING count(*) > 1`,
      );
      expect(duplicates).toEqual([]);
      const { rows: mismatched } = await deployment.db.query(
        `SELECT d.id FROM ${table('documents')} AS d
       WHERE d.chunk_count <> (SELECT count(*) FROM ${table('chunks')} AS c WHERE c.document_id = d.id)`,
      );
      expect(mismatched).toEqual([]);

      // ---- nothing was kept on any node's disk: the blobs are in PostgreSQL ----
      const filesOnNodes = deployment.processDirs.flatMap((dir) =>
        readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) => path.join(entry.parentPath, entry.name)),
      );
      expect(filesOnNodes).toEqual([]);
      const blobs = Number(
        (await deployment.db.query(`SELECT count(*) AS n FROM ${table('blobs')} WHERE complete`)).rows[0].n,
      );
      expect(blobs).toBe(total);
      console.log(
        `multi-node drill: ${total} documents (${UPLOADS + 2} uploads, ${DOWNLOADS + 1} URLs) ready across 4 nodes; ` +
          `worker pid ${victim.child.pid} killed while holding ${heldAtKill} job(s); 0 duplicate chunks; 0 files on the nodes' disks`,
      );
    }, 300_000);
  },
);

function downloadText(i: number): string {
  return `${syntheticDocument(1000 + i)} ${marker('download', i)}\n`;
}
