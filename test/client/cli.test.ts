// The `docindex` client commands, run as a user runs them (`node bin/docindex.js …`, built by
// `npm test`) against a real `docindex serve` process.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServer, stopServer } from '../helpers/process.js';
import { CORPUS_DIR, describeWithCorpus } from '../helpers/shared.js';

const ENCRYPTED_PDF = path.join(CORPUS_DIR, 'pdf/libreoffice-writer-password.pdf');

describeWithCorpus('docindex client commands', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'docindex-cli-client-'));
  const folder = path.join(root, 'library');
  let server: ServerProcess;
  let env: Record<string, string>;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    server = await startServer(['serve'], {
      DATA_DIR: path.join(root, 'data'),
      DEFAULT_RATE_LIMIT_RPM: '100000',
    });
    const apiKey = /api_key:\s+(dix_\S+)/.exec(server.stdout())?.[1];
    if (!apiKey) throw new Error(`the server printed no first key:\n${server.stdout()}`);
    env = { DOCINDEX_URL: server.baseUrl, DOCINDEX_API_KEY: apiKey };

    mkdirSync(path.join(folder, 'nested'), { recursive: true });
    writeFileSync(path.join(folder, 'salmon.txt'), 'Salmon swim upstream to spawn in their home river.\n');
    writeFileSync(
      path.join(folder, 'nested', 'herons.md'),
      '# Herons\n\nHerons stand still in shallow water and strike at fish.\n',
    );
    writeFileSync(
      path.join(folder, 'nested', 'kingfisher.html'),
      '<!doctype html><html><head><title>Kingfisher</title></head><body><p>The kingfisher dives for minnows.</p></body></html>',
    );
    writeFileSync(path.join(folder, 'ignored.xyz'), 'a,b\n1,2\n');
    writeFileSync(path.join(folder, '.hidden.txt'), 'hidden files are skipped\n');
    copyFileSync(ENCRYPTED_PDF, path.join(folder, 'locked.pdf'));
  });
  afterAll(async () => {
    if (server) await stopServer(server);
    rmSync(root, { recursive: true, force: true });
  });

  it('names the console and the API docs when it starts, and its root leads to the console', async () => {
    expect(server.stdout()).toContain(
      `docindex listening on ${server.baseUrl}\n  console:  ${server.baseUrl}/console\n  API docs: ${server.baseUrl}/docs`,
    );
    const answer = await fetch(server.baseUrl, { redirect: 'manual' });
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/console');
  });

  it('ingest --wait walks a folder, reports the failure with its reason and exits non-zero', async () => {
    const result = await cli('ingest', folder, '--metadata', 'shelf=nature', '--wait');
    expect(result.status).toBe(1);
    const out = result.stdout;
    expect(out).toMatch(/^failed\s+[0-9a-f-]{36}\s+\S*locked\.pdf$/m);
    expect(out).toMatch(/^ready\s+[0-9a-f-]{36}\s+\S*nested[/\\]herons\.md$/m);
    expect(out).toMatch(/^ready\s+[0-9a-f-]{36}\s+\S*salmon\.txt$/m);
    expect(out).toMatch(/^ready\s+[0-9a-f-]{36}\s+\S*nested[/\\]kingfisher\.html$/m);
    expect(out).not.toMatch(/ignored\.xyz|hidden/);
    expect(out).toMatch(/4 items: 3 ready, 1 failed/);
    expect(out).toMatch(/Failed:\n\s+\S*locked\.pdf: encrypted: .*password/);
    // stderr is not a terminal here: no progress line, nothing else.
    expect(result.stderr).toBe('');
  });

  it('ls, status and --json show what was ingested; rm deletes', async () => {
    const listed = await cli('ls');
    expect(listed.status).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+CREATED \(UTC\)\s+CHUNKS\s+SOURCE\s+ERROR$/);
    expect(listed.stdout).toMatch(/ready .* salmon\.txt/);
    expect(listed.stdout).toMatch(/failed .* locked\.pdf\s+encrypted: /);
    const ids = [...listed.stdout.matchAll(/^([0-9a-f-]{36})\s/gm)].map((m) => m[1]!);
    expect(ids).toHaveLength(4);

    const failedJson = await cli('ls', '--status', 'failed', '--json');
    expect(failedJson.status).toBe(0);
    const page = JSON.parse(failedJson.stdout);
    expect(Object.keys(page).sort()).toEqual(['documents', 'next_cursor']);
    expect(page.documents).toHaveLength(1);
    expect(page.documents[0]).toMatchObject({
      status: 'failed',
      error: { code: 'encrypted' },
      metadata: { shelf: 'nature' },
      source: { filename: 'locked.pdf' },
    });
    const failedId: string = page.documents[0].id;

    const unknownId = '00000000-0000-4000-8000-000000000000';
    const status = await cli('status', ...ids, unknownId);
    expect(status.status).toBe(1);
    expect(status.stdout.trim().split('\n')).toHaveLength(5); // header + 4 documents
    expect(status.stdout).toMatch(/encrypted: .*password/);
    expect(status.stderr).toBe(`docindex status: no document with id ${unknownId}\n`);

    const statusJson = JSON.parse((await cli('status', failedId, '--json')).stdout);
    expect(statusJson.documents.map((d: { id: string }) => d.id)).toEqual([failedId]);

    const removed = await cli('rm', failedId, unknownId);
    expect(removed.status).toBe(1);
    expect(removed.stdout).toBe(`deleted ${failedId}\n`);
    expect(removed.stderr).toMatch(new RegExp(`${unknownId}: No document with id`));
  });

  it('chunks prints a ready document’s chunks in order; --json is the list; an unknown id exits 1', async () => {
    const page = JSON.parse((await cli('ls', '--status', 'ready', '--json')).stdout);
    const salmon = page.documents.find(
      (d: { source: { filename: string } }) => d.source.filename === 'salmon.txt',
    );
    const human = await cli('chunks', salmon.id);
    expect(human.status).toBe(0);
    expect(human.stdout).toMatch(/^── chunk 0 \(\d+ tokens\)\n/);
    const json = JSON.parse((await cli('chunks', salmon.id, '--json')).stdout);
    expect(json.map((c: { index: number }) => c.index)).toEqual(
      Array.from({ length: salmon.chunk_count }, (_, i) => i),
    );
    expect(human.stdout).toContain(json[0].text);
    const unknown = await cli('chunks', '00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/No document with id .*\(404, not_found/);
    expect((await cli('chunks')).status).toBe(2);
  });

  it('cat prints a document’s text; --original writes its file to --output or stdout', async () => {
    const page = JSON.parse((await cli('ls', '--status', 'ready', '--json')).stdout);
    const herons = page.documents.find(
      (d: { source: { filename: string } }) => d.source.filename === 'herons.md',
    );
    const original = readFileSync(path.join(folder, 'nested', 'herons.md'), 'utf8');
    const text = await cli('cat', herons.id);
    expect(text.status).toBe(0);
    expect(text.stdout).toBe(original);
    const out = path.join(root, 'herons-copy.md');
    const saved = await cli('cat', herons.id, '--original', '--output', out);
    expect(saved.status).toBe(0);
    expect(saved.stderr).toMatch(/herons\.md \(text\/markdown, \d+ bytes\) → /);
    expect(readFileSync(out, 'utf8')).toBe(original);
    expect((await cli('cat', herons.id, '--original')).stdout).toBe(original);
    expect((await cli('cat', herons.id, '--output', out)).status).toBe(2);
    expect((await cli('cat', '00000000-0000-4000-8000-000000000000')).status).toBe(1);
  });

  it('ingest --external-id, update and reprocess make new versions of one document', async () => {
    const file = path.join(root, 'tern.txt');
    writeFileSync(file, 'Terns fly from pole to pole.\n');
    const first = await cli('ingest', file, '--external-id', 'birds/tern', '--wait');
    expect(first.status, first.stderr).toBe(0);
    const id = JSON.parse((await cli('ls', '--json')).stdout).documents.find(
      (d: { external_id: string | null }) => d.external_id === 'birds/tern',
    ).id as string;
    const waitFor = async (version: number) => {
      for (;;) {
        const doc = JSON.parse((await cli('status', id, '--json')).stdout);
        const record = Array.isArray(doc) ? doc[0] : (doc.documents?.[0] ?? doc);
        if (record.version === version && record.pending_version === null && record.status === 'ready')
          return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    writeFileSync(file, 'Terns nest on shingle beaches.\n');
    const again = await cli('ingest', file, '--external-id', 'birds/tern', '--wait');
    expect(again.status).toBe(0);
    await waitFor(2);
    expect((await cli('cat', id)).stdout).toBe('Terns nest on shingle beaches.\n');
    const updated = await cli('update', id, '--text', 'Terns dive for sand eels.', '--json');
    expect(updated.status, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ document_id: id, version: 3 });
    await waitFor(3);
    expect((await cli('cat', id)).stdout).toBe('Terns dive for sand eels.');
    const reprocessed = await cli('reprocess', id, '--chunk-size', '128', '--chunk-overlap', '0');
    expect(reprocessed.stdout).toMatch(new RegExp(`^${id}: version 4 queued`));
    await waitFor(4);
    expect((await cli('update', id)).status).toBe(2);
    expect((await cli('update', id, '--text', 'a', '--url', 'https://example.com/')).status).toBe(2);
    expect((await cli('ingest', file, folder, '--external-id', 'x')).status).toBe(2);
    expect((await cli('update', '00000000-0000-4000-8000-000000000000', '--text', 'x')).status).toBe(1);
  });

  it('query prints ranked chunks with their document; --filter and --json work', async () => {
    const human = await cli('query', 'herons', 'shallow', 'water');
    expect(human.status).toBe(0);
    expect(human.stdout).toMatch(/^ 1\. herons\.md · chunk 0 {2}\(score \d+\.\d{3}\)$/m);
    expect(human.stdout).toMatch(/Herons stand still in shallow water/);

    const json = await cli(
      'query',
      'salmon',
      '--top-k',
      '1',
      '--mode',
      'keyword',
      '--filter',
      'shelf=nature',
      '--json',
    );
    expect(json.status).toBe(0);
    const answer = JSON.parse(json.stdout);
    expect(answer.mode).toBe('keyword');
    expect(answer.results).toHaveLength(1);
    expect(answer.results[0].scores).toEqual({
      keyword: answer.results[0].score,
      semantic: null,
      rerank: null,
    });
    expect(answer.results[0]).toMatchObject({ metadata: { shelf: 'nature' }, page_start: null });
    expect(answer.results[0].text).toMatch(/Salmon swim upstream/);

    const none = await cli('query', 'salmon', '--filter', 'shelf=elsewhere');
    expect(none.status).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/no matching chunks/);

    // No embedding provider on this server: semantic is refused by it (not counted as a query);
    // an unknown mode never leaves the CLI.
    const semantic = await cli('query', 'salmon', '--mode', 'semantic');
    expect(semantic.status).toBe(1);
    expect(semantic.stderr).toMatch(/semantic_search_unavailable|embedding provider/);
    const unknown = await cli('query', 'salmon', '--mode', 'vector');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/--mode must be keyword, semantic or hybrid/);

    // No reranker either: --rerank is refused by the server (not counted); contradictory or
    // out-of-range flags never leave the CLI.
    const rerank = await cli('query', 'salmon', '--rerank', '--rerank-candidates', '20');
    expect(rerank.status).toBe(1);
    expect(rerank.stderr).toMatch(/rerank_unavailable|no reranker/);
    const both = await cli('query', 'salmon', '--rerank', '--no-rerank');
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/--rerank and --no-rerank contradict each other/);
    const candidates = await cli('query', 'salmon', '--rerank-candidates', '201');
    expect(candidates.status).toBe(2);
    expect(candidates.stderr).toMatch(/--rerank-candidates/);
  });

  it('usage draws 30 days with the totals and rate limit; --json is the API body', async () => {
    const json = JSON.parse((await cli('usage', '--json')).stdout);
    expect(json).toMatchObject({ period_days: 30, total_queries: 3, rate_limit_rpm: 100000 });
    expect(json.daily[0].count).toBe(3);

    const human = await cli('usage');
    expect(human.status).toBe(0);
    const lines = human.stdout.split('\n');
    expect(lines[0]).toBe('Queries per day, last 30 days (UTC)');
    const bars = lines.filter((line) => line.includes('┤'));
    expect(bars).toHaveLength(8);
    // Today is the rightmost column and the only day with queries: a full bar in every row.
    for (const line of bars) expect(line.trimEnd().endsWith('█')).toBe(true);
    expect(bars[0]).toMatch(/^3 ┤ {59}█$/);
    const axisLabels = lines[lines.findIndex((line) => line.includes('┼')) + 1]!;
    expect(axisLabels.trim().split(/\s+/)).toEqual([
      json.daily[29].date.slice(5),
      json.daily[0].date.slice(5),
    ]);
    expect(human.stdout).toMatch(/Total queries \(30 days\): 3 {3}today: 3/);
    expect(human.stdout).toMatch(/Rate limit: 100,000 requests per minute/);
    expect(human.stdout).toMatch(/By partition:\n {2}\(all\) {2}3\n/);

    const one = JSON.parse((await cli('usage', '--partition', 'default', '--json')).stdout);
    expect(one).toMatchObject({ total_queries: 0, partitions: [{ partition: 'default', total_queries: 0 }] });
  });

  it('ingest without --wait prints queued ids; --chunk-size and --chunk-overlap go with files and URLs', async () => {
    const notes = path.join(root, 'notes.txt');
    writeFileSync(notes, 'Kingfishers dive for small fish from a perch above the water.\n');
    const quick = await cli('ingest', notes);
    expect(quick.status).toBe(0);
    expect(quick.stdout).toMatch(/^queued\s+[0-9a-f-]{36}\s+\S*notes\.txt$/m);
    expect(quick.stdout).toMatch(/follow with `docindex status/);

    const chunked = await cli('ingest', notes, '--chunk-size', '128', '--chunk-overlap', '16', '--wait');
    expect(chunked.status).toBe(0);
    const id = /^ready\s+([0-9a-f-]{36})/m.exec(chunked.stdout)?.[1];
    const doc = JSON.parse((await cli('status', id!, '--json')).stdout).documents[0];
    expect(doc).toMatchObject({
      chunk_size: 128,
      chunk_overlap: 16,
      source: { type: 'file', filename: 'notes.txt' },
    });

    // A URL carries them too: the server checks them before it looks at the address.
    const url = await cli(
      'ingest',
      'https://example.com/report.pdf',
      '--chunk-size',
      '256',
      '--chunk-overlap',
      '256',
    );
    expect(url.status).toBe(1);
    expect(url.stdout).toMatch(/chunk_overlap must be smaller than chunk_size/);

    const outOfBounds = await cli('ingest', notes, '--chunk-size', '100');
    expect(outOfBounds).toMatchObject({
      status: 2,
      stderr:
        'docindex ingest: --chunk-size must be a whole number from 128 to 4096, got "100" (see docindex --help)\n',
    });
  });

  it('ingest --access gives the documents an access list; status, ls and query --principal act for principals', async () => {
    const memo = path.join(root, 'memo.txt');
    writeFileSync(memo, 'The narwhal budget is reviewed in March.\n');
    const ingested = await cli('ingest', memo, '--access', 'group:finance', '--access', 'user:9', '--wait');
    expect(ingested.status, ingested.stdout + ingested.stderr).toBe(0);
    const id = /^ready\s+([0-9a-f-]{36})/m.exec(ingested.stdout)?.[1];
    const doc = JSON.parse((await cli('status', id!, '--json')).stdout).documents[0];
    expect(doc.access).toEqual(['group:finance', 'user:9']);

    const found = JSON.parse(
      (await cli('query', 'narwhal budget', '--principal', 'user:9', '--json')).stdout,
    );
    expect(found.results.map((r: { document_id: string }) => r.document_id)).toContain(id);
    const hidden = JSON.parse(
      (await cli('query', 'narwhal budget', '--principal', 'group:eng', '--json')).stdout,
    );
    expect(hidden.results.map((r: { document_id: string }) => r.document_id)).not.toContain(id);
    const listed = JSON.parse(
      (await cli('ls', '--principal', 'group:eng', '--limit', '100', '--json')).stdout,
    );
    expect(listed.documents.map((d: { id: string }) => d.id)).not.toContain(id);
    expect((await cli('status', id!, '--principal', 'group:eng')).status).toBe(1);
    expect((await cli('status', id!, '--principal', 'group:finance')).status).toBe(0);
  });

  it('reports mistakes: missing paths, bad flags, no key, wrong key', async () => {
    const missing = await cli('ingest', path.join(root, 'nope.pdf'));
    expect(missing.status).toBe(1);
    expect(missing.stdout).toMatch(/nope\.pdf: not_found: no such file or directory/);

    const badFlag = await cli('ls', '--frobnicate');
    expect(badFlag.status).toBe(2);
    expect(badFlag.stderr).toBe('docindex ls: unknown option --frobnicate (see docindex --help)\n');

    const noKey = await runCli(['usage'], { DOCINDEX_URL: server.baseUrl, DOCINDEX_API_KEY: '' });
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toMatch(/no API key: set DOCINDEX_API_KEY/);

    const wrongKey = await runCli(['usage', '--api-key', 'dix_wrong', '--url', server.baseUrl], {});
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stderr).toMatch(/invalid, expired or revoked.*\(401, unauthorized, req_/);
  });

  it('--filter takes JSON with operators on query and ls; rm --filter deletes what matches', async () => {
    const notes = path.join(root, 'terns.txt');
    writeFileSync(notes, 'Arctic terns fly from pole to pole every year.\n');
    expect(
      (await cli('ingest', notes, '--metadata', 'bird=tern', '--metadata', 'year=2019', '--wait')).status,
    ).toBe(0);
    expect(
      (await cli('ingest', notes, '--metadata', 'bird=tern', '--metadata', 'year=2023', '--wait')).status,
    ).toBe(0);

    const listed = JSON.parse((await cli('ls', '--filter', '{"year": {"$gte": "2020"}}', '--json')).stdout);
    expect(listed.documents.map((d: { metadata: { year: string } }) => d.metadata.year)).toEqual(['2023']);
    const hits = JSON.parse(
      (
        await cli(
          'query',
          'terns',
          '--filter',
          '{"year": {"$lt": "2020"}}',
          '--filter',
          'bird=tern',
          '--json',
        )
      ).stdout,
    );
    expect(hits.results.map((r: { metadata: { year: string } }) => r.metadata.year)).toEqual(['2019']);

    const refused = await cli('query', 'terns', '--filter', '{"year": {"$gt": 2020}}');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/\/filter\/year\/\$gt.*\(400, invalid_request/);
    const notJson = await cli('ls', '--filter', '{year: 2020}');
    expect(notJson.status).toBe(2);
    expect(notJson.stderr).toMatch(/--filter .* is not valid JSON/);

    const removed = await cli('rm', '--filter', '{"year": "2019"}');
    expect(removed.status).toBe(0);
    expect(removed.stdout).toBe('deleted 1 document\n');
    const left = JSON.parse((await cli('ls', '--filter', 'bird=tern', '--json')).stdout);
    expect(left.documents.map((d: { metadata: { year: string } }) => d.metadata.year)).toEqual(['2023']);
  });
});
