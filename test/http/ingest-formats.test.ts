// Every format added after PDF, DOCX, text and HTML, end to end through POST /v1/ingest/file: a
// real file of each (../shared/corpus) ends `ready`, recorded with its format's media type, and a
// query finds a word that only that file holds. Wrong and damaged files end as a user would see.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentTypeOf, type FormatId, formatSpec } from '../../src/domain/formats.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { multipart, type Part } from '../helpers/multipart.js';
import { CORPUS_DIR, describeWithCorpus } from '../helpers/shared.js';
import { makeZip } from '../pipeline/extract-support.js';

describe('POST /v1/ingest/file with the newer formats', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const upload = async (parts: Part[]) => {
    const { payload, contentType } = await multipart(parts);
    return h.request('POST', '/v1/ingest/file', { payload, headers: { 'content-type': contentType } });
  };

  /** [format, corpus file, words to query, what the best hit holds] */
  const CASES: [FormatId, string, string, string, number | null][] = [
    ['pptx', 'pptx/powerpoint_sample.pptx', 'rectangle shape', 'A rectangle shape with this text inside.', 2],
    ['pptx', 'pptx/powerpoint_sample.pptx', 'final notes third slide', 'Final notes on the third slide.', 3],
    [
      'xlsx',
      'xlsx/xlsx_03_chartsheet.xlsx',
      'saltwater ducks',
      '| Year | Freshwater Ducks | Saltwater Ducks | Ducks |',
      null,
    ],
    ['csv', 'csv/seattle-weather.csv', 'drizzle', '| drizzle |', null],
    ['html', 'html/v8-blog.html', 'standalone Emscripten', 'Emscripten', null],
    ['odt', 'odt/fake.odt', 'Sarah Mark Ryan', '| Leader | Sarah | Mark | Ryan |', null],
    ['epub', 'epub/alice.epub', 'caterpillar hookah', 'Caterpillar', null],
    ['rtf', 'rtf/issue_15.rtf', 'Arenal volcano', 'Arenal Volcano', null],
    ['eml', 'eml/fake-email-attachment.eml', 'fake attachment', 'Hey this is a fake attachment!', null],
  ];

  describeWithCorpus('a corpus file of each format', () => {
    it.each(CASES)('%s (%s): ready, and "%s" finds it', async (format, file, query, expected, page) => {
      const bytes = readFileSync(path.join(CORPUS_DIR, file));
      const res = await upload([{ name: 'file', value: bytes, filename: path.basename(file) }]);
      expect(res.statusCode).toBe(202);
      const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
      expect(doc).toMatchObject({ status: 'ready', source: { content_type: contentTypeOf(format) } });
      const [hit] = (
        await h.request('POST', '/v1/query', { body: { query, document_ids: [doc!.id], top_k: 1 } })
      ).json().results;
      expect(hit.text).toContain(expected);
      if (page !== null) {
        expect(hit.page_start).toBeLessThanOrEqual(page);
        expect(hit.page_end).toBeGreaterThanOrEqual(page);
      }
    });
  });

  it('a wrong extension is refused at once (415); a damaged archive ends failed: corrupt', async () => {
    const refused = await upload([
      { name: 'file', value: '%PDF-1.7\nnot a workbook', filename: 'sheet.xlsx' },
    ]);
    expect(refused.statusCode).toBe(415);
    expect(refused.json().detail).toMatch(/^sheet.xlsx is not an XLSX \(starts with PDF signature\)/);
    // Only the first bytes of a ZIP: detection cannot read its directory.
    const stub = await upload([
      { name: 'file', value: Buffer.from('PK\x03\x04AAAAAAAA'), filename: 'deck.pptx' },
    ]);
    expect(stub.statusCode).toBe(415);
    expect(stub.json().detail).toMatch(/^deck.pptx is not a PPTX \(a damaged ZIP archive/);
    // A whole directory, but a part whose deflated bytes are garbage: detection passes (it reads
    // only the directory), extraction fails.
    const damaged = makeZip([
      { name: '[Content_Types].xml', data: '<Types/>' },
      {
        name: 'ppt/presentation.xml',
        deflated: Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00, 0x13, 0x37]),
        claimedSize: 100,
      },
    ]);
    const broken = await upload([{ name: 'file', value: damaged, filename: 'deck.pptx' }]);
    expect(broken.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, broken.json().document_ids);
    expect(doc).toMatchObject({ status: 'failed', error: { code: 'corrupt' } });
  });
});

describeWithCorpus('POST /v1/ingest/url with the newer formats (a loopback origin)', () => {
  let h: Harness;
  let server: http.Server;
  let origin: string;
  /** id → [file, Content-Type sent]: no extension in the URL, so the type and the bytes decide. */
  const SERVED: Record<string, [string, string]> = {
    '1': ['pptx/sample-presentation.pptx', formatSpec('pptx').mediaTypes[0]],
    '2': ['xlsx/stanley-cups.xlsx', 'application/octet-stream'],
    '3': ['csv/csv-comma.csv', 'text/csv; charset=utf-8'],
    '4': ['odt/fake.odt', 'application/octet-stream'],
    '5': ['epub/epub_purvis_poetry.epub', 'application/epub+zip'],
    '6': ['rtf/nutridoc.rtf', 'application/rtf'],
    '7': ['eml/attachment_message_rfc822.eml', 'message/rfc822'],
  };
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
      const served = SERVED[id];
      if (!served) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': served[1] });
      res.end(readFileSync(path.join(CORPUS_DIR, served[0])));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    origin = `http://127.0.0.1:${port}`;
    h = await startHarness({ env: { URL_FETCH_ALLOW: `127.0.0.1:${port}` } });
  });
  afterAll(async () => {
    await h.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const CASES: [string, FormatId, string, string][] = [
    ['1', 'pptx', 'sub-sub-detail', 'This one is a sub-sub-detail'],
    ['2', 'xlsx', 'Maple Leafs', '| Maple Leafs | TOR | 13 |'],
    ['3', 'csv', 'Rasmussen Group', 'Rasmussen Group'],
    ['4', 'odt', 'Leader Sarah', '| Leader | Sarah | Mark | Ryan |'],
    ['5', 'epub', 'Standard Ebooks', 'Standard Ebooks'],
    ['6', 'rtf', 'bakewell fudge', 'bakewell fudge'],
    ['7', 'eml', 'Another PDF', 'Subject: Another PDF'],
  ];
  it.each(CASES)('/download?id=%s → %s, ready, and "%s" finds it', async (id, format, query, expected) => {
    const res = await h.request('POST', '/v1/ingest/url', { body: { url: `${origin}/download?id=${id}` } });
    expect(res.statusCode).toBe(202);
    const [doc] = await h.waitForDone(h.orgA, res.json().document_ids);
    expect(doc).toMatchObject({
      status: 'ready',
      source: { type: 'url', content_type: contentTypeOf(format) },
    });
    const [hit] = (
      await h.request('POST', '/v1/query', { body: { query, document_ids: [doc!.id], top_k: 1 } })
    ).json().results;
    expect(hit.text).toContain(expected);
  });
});
