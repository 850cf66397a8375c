// Memory caps a user notices: every pipeline thread has a heap cap (EXTRACT_MAX_HEAP_MB);
// a file that needs more fails `too_large` and the server goes on answering, even when the file
// takes its heap past the cap in one allocation, while a text file far larger than the cap is
// still indexed, because it is decoded and chunked a piece at a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { multipart } from '../helpers/multipart.js';

const MB = 1024 * 1024;
const HEAP_MB = 64;

describe('a pipeline thread’s heap cap', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      // The time cap is raised: only memory is under test, and a loaded machine is slow.
      env: {
        EXTRACT_TIMEOUT_MS: '900000',
        EXTRACT_MAX_HEAP_MB: String(HEAP_MB),
        EXTRACT_WORKERS: '1',
        MAX_UPLOAD_BYTES: String(100 * MB),
      },
    });
  });
  afterAll(() => h.close());

  const upload = async (value: Buffer, filename: string) => {
    const { payload, contentType } = await multipart([{ name: 'file', value, filename }]);
    const res = await h.request('POST', '/v1/ingest/file', {
      payload,
      headers: { 'content-type': contentType },
    });
    expect(res.statusCode).toBe(202);
    return res.json().document_ids as string[];
  };

  it('a page whose document tree needs more ends failed: too_large; the server answers on', async () => {
    // 200,000 elements: the HTML parser's document tree alone takes several times the cap.
    const cells = '<tr><td>cell</td><td>value</td></tr>'.repeat(100_000);
    const html = Buffer.from(`<!doctype html><html><body><table>${cells}</table></body></html>`);
    const [doc] = await h.waitForDone(h.orgA, await upload(html, 'huge.html'), 240_000);
    expect(doc).toMatchObject({ status: 'failed', error: { code: 'too_large' } });
    expect((doc!.error as { message: string }).message).toMatch(new RegExp(`more than ${HEAP_MB} MB`));

    expect((await h.request('GET', '/healthz', { key: null })).statusCode).toBe(200);
    const [after] = await h.waitForDone(h.orgA, await h.ingest(h.orgA, ['indexed after the failure']));
    expect(after, JSON.stringify(after)).toMatchObject({ status: 'ready' });
  }, 300_000);

  it('a page that goes past the cap in one step ends failed: too_large; the server answers on', async () => {
    // Its Windows line endings made \n copy 51 MB of page at once: a jump far beyond the slack V8
    // gives a heap past its cap, which aborts a whole process (this server, were the page read in
    // one of its threads).
    const html = Buffer.from(`<html><body>\r\n${'<p>a line</p>\r\n'.repeat(3 * MB)}</body></html>`);
    const [doc] = await h.waitForDone(h.orgA, await upload(html, 'crlf.html'), 240_000);
    expect(doc).toMatchObject({ status: 'failed', error: { code: 'too_large' } });
    expect((await h.request('GET', '/healthz', { key: null })).statusCode).toBe(200);
    const [after] = await h.waitForDone(h.orgA, await h.ingest(h.orgA, ['indexed after the leap']));
    expect(after, JSON.stringify(after)).toMatchObject({ status: 'ready' });
  }, 300_000);

  it('a text file of several times the cap is indexed: it is never held whole', async () => {
    const paragraph =
      'Streaming keeps a window of the text in memory: each chunk is planned, sent and forgotten.\n\n';
    const text = `${paragraph.repeat(Math.ceil((1.25 * HEAP_MB * MB) / paragraph.length))}zebrafinch at the end.`;
    const [doc] = await h.waitForDone(h.orgA, await upload(Buffer.from(text), 'big.txt'), 900_000);
    expect(doc, JSON.stringify(doc?.error)).toMatchObject({ status: 'ready' });
    const [hit] = (
      await h.request('POST', '/v1/query', {
        body: { query: 'zebrafinch', document_ids: [doc!.id], top_k: 1 },
      })
    ).json().results;
    expect(hit.text).toContain('zebrafinch at the end.');
  }, 1_000_000);
});
