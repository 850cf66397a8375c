// What a deployment with traces on must show, whatever its shape: one connected trace from a file
// upload to `ready` (continuing the client's traceparent), a hybrid reranked query's stages under
// its request, and no span attribute carrying the document's text, its file name, its metadata or
// the query's text. Used by the embedded and the scale-out tests.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { waitFor } from '../contract/support.js';
import { multipart } from './multipart.js';
import type { OtlpReceiver, ReceivedSpan } from './otlp-receiver.js';

/** The backends that make the spans: who serves the API, who runs the jobs. */
export interface TracedDeployment {
  /** Where uploads and queries go. */
  apiUrl: string;
  apiKey: string;
  /** The `docindex.process.role` of the process that runs the jobs: `worker`, or `serve` when embedded. */
  jobRole: 'serve' | 'worker';
}

const SERVER = 2;
const CONSUMER = 5;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    `one span ${name} in ${spans.map((s) => s.name).join(', ')}`,
  ).toEqual([name]);
  return found[0]!;
}

/** Checks one upload's trace and one query's; returns the marker word that must appear nowhere. */
export async function checkTraces(receiver: OtlpReceiver, deployment: TracedDeployment): Promise<void> {
  const marker = `zq${hex(6)}marker`;
  const auth = { authorization: `Bearer ${deployment.apiKey}` };

  // ---- an upload whose request carries a traceparent ----
  const uploadTrace = hex(16);
  const clientSpan = hex(8);
  const text = `Otters ${marker} hold hands while they sleep. ${'Rivers and kelp forests shelter them. '.repeat(40)}`;
  const { payload, contentType } = await multipart([
    { name: 'file', value: Buffer.from(text), filename: `${marker}-notes.txt` },
    { name: 'metadata', value: JSON.stringify({ topic: marker }) },
  ]);
  const res = await fetch(`${deployment.apiUrl}/v1/ingest/file`, {
    method: 'POST',
    headers: { ...auth, 'content-type': contentType, traceparent: `00-${uploadTrace}-${clientSpan}-01` },
    body: payload,
  });
  expect(res.status, await res.clone().text()).toBe(202);
  const id = ((await res.json()) as { document_ids: string[] }).document_ids[0]!;
  await waitFor(
    'the document ready',
    async () => {
      const doc = (await (
        await fetch(`${deployment.apiUrl}/v1/documents/${id}`, { headers: auth })
      ).json()) as {
        status: string;
      };
      expect(doc.status).not.toBe('failed');
      return doc.status === 'ready';
    },
    60_000,
    50,
  );
  const stages = [
    'POST /v1/ingest/file',
    'docindex.ingest.stage',
    'docindex.ingest.commit',
    'docindex.queue.wait',
    'docindex.job process',
    'docindex.extract',
    'docindex.chunk',
    'docindex.index.write',
  ];
  await waitFor(
    'every stage of the upload exported',
    () => stages.every((name) => receiver.trace(uploadTrace).some((s) => s.name === name)),
    30_000,
    50,
  );
  const upload = receiver.trace(uploadTrace);
  const request = byName(upload, 'POST /v1/ingest/file');
  const stage = byName(upload, 'docindex.ingest.stage');
  const commit = byName(upload, 'docindex.ingest.commit');
  const wait = byName(upload, 'docindex.queue.wait');
  const job = byName(upload, 'docindex.job process');
  const extract = byName(upload, 'docindex.extract');
  const chunk = byName(upload, 'docindex.chunk');
  const write = byName(upload, 'docindex.index.write');

  // The client's span is the request's parent; each stage hangs off the one that started it.
  expect(request.parentSpanId).toBe(clientSpan);
  expect(request.kind).toBe(SERVER);
  expect(stage.parentSpanId).toBe(request.spanId);
  expect(commit.parentSpanId).toBe(request.spanId);
  expect(wait.parentSpanId).toBe(commit.spanId);
  expect(job.parentSpanId).toBe(commit.spanId);
  expect(job.kind).toBe(CONSUMER);
  for (const step of [extract, chunk, write]) expect(step.parentSpanId).toBe(job.spanId);

  // What the spans say: route, status, ids, counts, sizes.
  expect(request.attributes).toMatchObject({
    'http.request.method': 'POST',
    'http.route': '/v1/ingest/file',
    'http.response.status_code': 202,
  });
  expect(request.attributes['docindex.request_id']).toMatch(/^req_/);
  expect(request.attributes['docindex.org_id']).toEqual(expect.any(String));
  // An attribute that does not apply is left out, not sent empty.
  expect(Object.keys(request.attributes)).not.toContain('docindex.request.aborted');
  expect(commit.attributes['docindex.document.ids']).toEqual([id]);
  expect(stage.attributes['docindex.file.bytes']).toBe(Buffer.byteLength(text));
  expect(job.attributes).toMatchObject({ 'docindex.document.id': id, 'docindex.job.attempt': 1 });
  expect(job.attributes['docindex.queue.wait_ms']).toEqual(expect.any(Number));
  expect(extract.attributes['docindex.format']).toBe('txt');
  expect(chunk.attributes['docindex.chunks']).toEqual(expect.any(Number));
  expect(chunk.attributes['docindex.chunks'] as number).toBeGreaterThan(0);
  expect(write.attributes['docindex.index.saved']).toBe(true);

  // The API's spans and the job's come from the processes that did the work.
  for (const span of [request, stage, commit]) expect(span.resource['docindex.process.role']).toBe('serve');
  for (const span of [job, extract, chunk, write]) {
    expect(span.resource['docindex.process.role']).toBe(deployment.jobRole);
  }
  const apiInstance = request.resource['service.instance.id'];
  const jobInstance = job.resource['service.instance.id'];
  expect(apiInstance).toEqual(expect.any(String));
  expect(jobInstance).toEqual(expect.any(String));
  if (deployment.jobRole === 'worker') expect(jobInstance).not.toBe(apiInstance);
  else expect(jobInstance).toBe(apiInstance);
  expect(request.resource['service.name']).toBe('docindex');

  // ---- a hybrid query, reranked ----
  const queryTrace = hex(16);
  const answer = await fetch(`${deployment.apiUrl}/v1/query`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', traceparent: `00-${queryTrace}-${hex(8)}-01` },
    body: JSON.stringify({ query: `${marker} otters`, top_k: 3, mode: 'hybrid' }),
  });
  expect(answer.status, await answer.clone().text()).toBe(200);
  const found = (await answer.json()) as { results: Array<{ document_id: string }>; degraded: boolean };
  expect(found.degraded).toBe(false);
  expect(found.results[0]?.document_id).toBe(id);
  const queryStages = [
    'POST /v1/query',
    'docindex.query',
    'docindex.query.keyword',
    'docindex.query.semantic',
    'docindex.query.fusion',
    'docindex.query.rerank',
  ];
  await waitFor(
    'every stage of the query exported',
    () => queryStages.every((name) => receiver.trace(queryTrace).some((s) => s.name === name)),
    30_000,
    50,
  );
  const spans = receiver.trace(queryTrace);
  const queryRequest = byName(spans, 'POST /v1/query');
  const query = byName(spans, 'docindex.query');
  expect(query.parentSpanId).toBe(queryRequest.spanId);
  expect(query.attributes).toMatchObject({
    'docindex.query.mode': 'hybrid',
    'docindex.query.top_k': 3,
    'docindex.query.results': found.results.length,
    'docindex.query.degraded': false,
  });
  expect(Object.keys(query.attributes)).not.toContain('docindex.query.degraded_reasons');
  for (const name of queryStages.slice(2)) expect(byName(spans, name).parentSpanId).toBe(query.spanId);
  expect(byName(spans, 'docindex.query.keyword').attributes['docindex.query.hits']).toBeGreaterThan(0);
  expect(byName(spans, 'docindex.query.rerank').attributes['docindex.query.rerank_applied']).toBe(true);

  // ---- what is never recorded: text, file name, metadata value, query ----
  const everything = [
    ...receiver.spans.map((s) => JSON.stringify([s.name, s.attributes, s.resource])),
    ...receiver.bodies,
  ].join('\n');
  expect(everything).toContain(id);
  expect(everything.toLowerCase()).not.toContain(marker);
}
