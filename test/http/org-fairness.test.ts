// One org's processing backlog must not hold another org's small document back: org A queues
// several large documents, then org B one line; B's document is ready while some of A's have not
// started. Asserted by order (whether A still had queued documents), not by time.
import { afterEach, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** About 1.2 MB of prose: a second or more of chunking in a thread, on a loaded machine longer. */
const large = (n: number) =>
  `Document ${n}. ${'Sentences follow one another across the page. '.repeat(26_000)}`;

const statusOf = async (harness: Harness, key: string, id: string) => {
  const res = await harness.request('GET', `/v1/documents/${id}`, { key });
  return (res.json() as { status: string }).status;
};

it('processes another org’s one-line document ahead of one org’s backlog of large documents', async () => {
  // Four slots over two threads, the defaults' shape.
  h = await startHarness({ env: { WORKER_CONCURRENCY: '4', EXTRACT_WORKERS: '2' } });
  const { orgA, orgB } = h;
  const backlog: string[] = [];
  // Three requests of four (one JSON body stays under its size limit): twelve documents for four
  // slots. B's document waits for a pipeline thread behind A's that started before it, and A's
  // slots go on freeing meanwhile; with eight, all of them could start in that wait on a loaded
  // machine, and B's turn would no longer show in the states.
  for (const first of [0, 4, 8]) {
    backlog.push(
      ...(await h.ingest(
        orgA,
        [0, 1, 2, 3].map((i) => large(first + i)),
      )),
    );
  }
  const [small] = await h.ingest(orgB, ['One line from another org.']);
  let status = 'queued';
  for (let i = 0; i < 1200 && status !== 'ready' && status !== 'failed'; i++) {
    await new Promise((wait) => setTimeout(wait, 50));
    status = await statusOf(h, orgB.apiKey, small as string);
  }
  expect(status).toBe('ready');
  const backlogStates = await Promise.all(backlog.map((id) => statusOf(h as Harness, orgA.apiKey, id)));
  // Taken in turn, B's document went ahead of the A documents not yet started (embedded, to the
  // slot org A could not fill), then to the first thread that came free: some of A's documents
  // had not even started. In arrival order it was taken after all twelve.
  expect(backlogStates.filter((s) => s === 'queued').length).toBeGreaterThanOrEqual(1);
  await h.waitForDone(orgA, backlog, 300_000);
}, 400_000);
