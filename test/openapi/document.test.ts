// The served OpenAPI document (GET /openapi.json, admin API on) is valid for
// @apidevtools/swagger-parser and clean for Spectral's spectral:oas ruleset (.spectral.yaml, the
// ruleset `npm run lint:openapi` uses); every operation has an operationId that is the client's
// method name, a summary, a description, problem+json error responses and examples; and every
// example passes its own schema, in the document and where the schema is defined.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/client/admin-client.js';
import { DocindexClient } from '../../src/client/client.js';
import * as wire from '../../src/wire/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { runCommand } from '../helpers/process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

// biome-ignore lint/suspicious/noExplicitAny: a parsed JSON document, read by path
type Json = Record<string, any>;

interface Operation {
  method: string;
  path: string;
  op: Json;
}

function operationsOf(doc: Json): Operation[] {
  return Object.entries(doc.paths as Json).flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path: p, op: item[method] as Json })),
  );
}

/** The JSON Schema 2020-12 validator OpenAPI 3.1 schemas are written for. */
function schemaValidator() {
  const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
  // OpenAPI's marker for file contents: any string.
  ajv.addFormat('binary', true);
  return ajv;
}

interface ExampleCheck {
  where: string;
  schema: unknown;
  value: unknown;
}

/** Every example in a schema tree (`examples: [...]` on any subschema), with its schema. */
function schemaExamples(schema: unknown, where: string, out: ExampleCheck[] = []): ExampleCheck[] {
  if (Array.isArray(schema)) {
    for (const [i, item] of schema.entries()) schemaExamples(item, `${where}/${i}`, out);
  } else if (schema !== null && typeof schema === 'object') {
    const node = schema as Json;
    if (Array.isArray(node.examples)) {
      for (const [i, value] of (node.examples as unknown[]).entries()) {
        out.push({ where: `${where}/examples/${i}`, schema: node, value });
      }
    }
    for (const [key, child] of Object.entries(node)) {
      if (key !== 'examples') schemaExamples(child, `${where}/${key}`, out);
    }
  }
  return out;
}

/** Every example of a media type or parameter (`example`, `examples.*.value`), with its schema. */
function mediaExamples(holder: Json, where: string): ExampleCheck[] {
  const out: ExampleCheck[] = [];
  if ('example' in holder)
    out.push({ where: `${where}/example`, schema: holder.schema, value: holder.example });
  for (const [name, example] of Object.entries((holder.examples ?? {}) as Json)) {
    out.push({ where: `${where}/examples/${name}`, schema: holder.schema, value: example.value });
  }
  return out;
}

function failures(checks: ExampleCheck[]): string[] {
  const ajv = schemaValidator();
  return checks.flatMap(({ where, schema, value }) => {
    const validate = ajv.compile(schema as object);
    return validate(value) ? [] : [`${where}: ${ajv.errorsText(validate.errors)}`];
  });
}

describe('the OpenAPI document', () => {
  let h: Harness;
  let doc: Json;
  /** The document with every $ref replaced by what it points to. */
  let resolved: Json;
  beforeAll(async () => {
    h = await startHarness({
      worker: false,
      env: { ADMIN_TOKEN: 'openapi-test-admin-token-0123456789abcdef' },
    });
    const res = await h.request('GET', '/openapi.json', { key: null });
    expect(res.statusCode).toBe(200);
    doc = res.json();
    resolved = (await SwaggerParser.dereference(structuredClone(doc) as never)) as Json;
  });
  afterAll(() => h.close());

  it('is valid for @apidevtools/swagger-parser', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    // The check can fail: a document with a broken reference is refused.
    const broken = structuredClone(doc);
    broken.paths['/v1/usage'].get.responses['401'] = { $ref: '#/components/responses/NoSuchProblem' };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow(/NoSuchProblem/);
  });

  it('has the API’s metadata: servers, contact, licence (package.json’s), tags with descriptions, both security schemes', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(doc.info.contact.url).toMatch(/^https:\/\//);
    expect(pkg.license).toBe('Apache-2.0');
    expect(doc.info.license).toEqual({ name: pkg.license, identifier: pkg.license });
    for (const tag of doc.tags) expect(tag.description, tag.name).toMatch(/\S/);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminToken', 'bearer']);
  });

  it('gives every operation a unique operationId that is the TS client’s method name, a summary, a description and a defined tag and scheme', () => {
    const operations = operationsOf(doc);
    expect(operations.length).toBeGreaterThanOrEqual(19);
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size, ids.join(', ')).toBe(ids.length);
    const tags = new Set(doc.tags.map((t: Json) => t.name));
    for (const { method, path: p, op } of operations) {
      const name = `${method.toUpperCase()} ${p}`;
      expect(op.operationId, name).toMatch(/^[a-z][a-zA-Z0-9]*$/);
      // The two clients cover the tenant and the admin API, under the same names.
      const client = p.startsWith('/admin/v1/')
        ? AdminClient.prototype
        : p.startsWith('/v1/')
          ? DocindexClient.prototype
          : null;
      if (client) {
        const clientMethod = (client as unknown as Json)[op.operationId];
        expect(typeof clientMethod, `${name}: ${op.operationId}`).toBe('function');
      }
      expect(op.summary, name).toMatch(/\S/);
      expect(op.description, name).toMatch(/\S/);
      expect(op.tags?.length, name).toBeGreaterThan(0);
      for (const tag of op.tags) expect(tags.has(tag), `${name}: tag ${tag}`).toBe(true);
      expect(op.security?.length, name).toBeGreaterThan(0);
      for (const requirement of op.security) {
        for (const scheme of Object.keys(requirement)) {
          expect(doc.components.securitySchemes[scheme], `${name}: ${scheme}`).toBeDefined();
        }
      }
    }
  });

  it('gives every operation its problem+json error responses, each code with an example', () => {
    for (const { method, path: p, op } of operationsOf(resolved)) {
      const name = `${method.toUpperCase()} ${p}`;
      const errors = Object.entries(op.responses as Json).filter(([status]) => Number(status) >= 400);
      const statuses = errors.map(([status]) => status);
      expect(statuses, name).toEqual(expect.arrayContaining(['400', '401', '429', '503']));
      if (p.startsWith('/v1/')) expect(statuses, name).toContain('403');
      if (p.includes('{')) expect(statuses, name).toContain('404');
      for (const [status, response] of errors) {
        expect(Object.keys(response.content), `${name} ${status}`).toEqual(['application/problem+json']);
        const media = response.content['application/problem+json'];
        const codes: string[] = media.schema.properties.code.enum;
        expect(Object.keys(media.examples).sort(), `${name} ${status}`).toEqual([...codes].sort());
        for (const example of Object.values(media.examples as Json)) {
          expect(example.value.status, `${name} ${status}`).toBe(Number(status));
          expect(example.value.type).toBe(`https://docindex.dev/problems/${example.value.code}`);
        }
      }
    }
    const ingest = resolved.paths['/v1/ingest'].post.responses;
    expect(Object.keys(ingest)).toEqual(expect.arrayContaining(['409', '413', '415', '422']));
    expect(ingest['429'].headers['Retry-After']).toBeDefined();
    expect(ingest['401'].headers['WWW-Authenticate']).toBeDefined();
  });

  it('shows an example of every request body and every success response with a body', () => {
    for (const { method, path: p, op } of operationsOf(resolved)) {
      const name = `${method.toUpperCase()} ${p}`;
      if (op.requestBody) {
        for (const [type, media] of Object.entries(op.requestBody.content as Json)) {
          expect(mediaExamples(media, type).length, `${name} request ${type}`).toBeGreaterThan(0);
        }
      }
      const success = Object.entries(op.responses as Json).filter(([status]) => status.startsWith('2'));
      expect(success.length, name).toBe(1);
      for (const [status, response] of success) {
        if (status === '204') {
          expect(response.content, name).toBeUndefined();
          continue;
        }
        for (const [type, media] of Object.entries(response.content as Json)) {
          expect(mediaExamples(media, type).length, `${name} ${status} ${type}`).toBeGreaterThan(0);
        }
      }
    }
    // The multipart form of the file upload is documented although Fastify never sees it as a body.
    expect(Object.keys(resolved.paths['/v1/ingest/file'].post.requestBody.content)).toEqual([
      'multipart/form-data',
    ]);
    expect(resolved.paths['/v1/ingest'].post.parameters.map((p: Json) => p.name)).toContain(
      'Idempotency-Key',
    );
  });

  it('has examples that pass their own schemas, in the document', () => {
    const checks: ExampleCheck[] = [];
    for (const { method, path: p, op } of operationsOf(resolved)) {
      const where = `${method.toUpperCase()} ${p}`;
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
        checks.push(...mediaExamples(media, `${where} request ${type}`));
        checks.push(...schemaExamples(media.schema, `${where} request ${type} schema`));
      }
      for (const parameter of (op.parameters ?? []) as Json[]) {
        checks.push(...mediaExamples(parameter, `${where} ${parameter.in} ${parameter.name}`));
      }
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const [type, media] of Object.entries((response.content ?? {}) as Json)) {
          checks.push(...mediaExamples(media, `${where} ${status} ${type}`));
          checks.push(...schemaExamples(media.schema, `${where} ${status} ${type} schema`));
        }
      }
    }
    expect(checks.length).toBeGreaterThan(100);
    expect(failures(checks)).toEqual([]);
    // The check can fail: an example that breaks its schema is reported.
    const acceptedExample = checks.find((c) => c.where === 'POST /v1/ingest 202 application/json/example');
    expect(acceptedExample).toBeDefined();
    const broken = { ...acceptedExample!, value: { ...(acceptedExample!.value as Json), queued: 'one' } };
    expect(failures([broken])).toEqual([expect.stringContaining('/queued must be integer')]);
  });

  it('has examples that pass their own schemas where the schemas are defined', () => {
    const checks = Object.entries(wire).flatMap(([name, value]) =>
      typeof value === 'object' && value !== null ? schemaExamples(value, name) : [],
    );
    expect(checks.map((c) => c.where)).toEqual(
      expect.arrayContaining([
        'IngestBody/examples/0',
        'QueryResponse/examples/0',
        'CreateKeyBody/examples/0',
      ]),
    );
    expect(failures(checks)).toEqual([]);
  });

  it('passes Spectral (spectral:oas, .spectral.yaml) with no errors and no warnings', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docindex-spectral-'));
    try {
      const served = path.join(dir, 'openapi.json');
      writeFileSync(served, JSON.stringify(doc, null, 2));
      // The check can fail: the same document without an operationId and with a wrong example.
      const damaged = structuredClone(doc);
      delete damaged.paths['/v1/usage'].get.operationId;
      damaged.paths['/v1/usage'].get.responses['200'].content['application/json'].example.total_queries =
        'many';
      const broken = path.join(dir, 'broken.json');
      writeFileSync(broken, JSON.stringify(damaged, null, 2));
      const run = await runCommand(
        path.join(ROOT, 'node_modules/.bin/spectral'),
        [
          'lint',
          served,
          broken,
          '--ruleset',
          path.join(ROOT, '.spectral.yaml'),
          '--format',
          'json',
          '--quiet',
        ],
        { timeoutMs: 120_000 },
      );
      let results: Json[];
      try {
        results = JSON.parse(run.stdout);
      } catch {
        throw new Error(`Spectral gave no JSON report (exit ${run.status}): ${run.stdout}\n${run.stderr}`);
      }
      const describe = (r: Json) =>
        `${['error', 'warning', 'info', 'hint'][r.severity]} ${r.code} at ${r.path.join('.')}: ${r.message}`;
      expect(results.filter((r) => r.source === served).map(describe)).toEqual([]);
      const caught = results.filter((r) => r.source === broken).map((r) => r.code);
      expect(caught, run.stderr).toEqual(
        expect.arrayContaining(['operation-operationId', 'oas3-valid-media-example']),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
