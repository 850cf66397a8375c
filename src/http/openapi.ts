// What a route's OpenAPI entry must show but its Fastify schema cannot declare without Fastify also
// enforcing it: the multipart form of POST /v1/ingest/file (read as a stream by the route, so there
// is no body for Fastify to validate) and the Idempotency-Key header of the ingest operations
// (checked by domain/idempotency.ts, whose messages and pointers the API promises). Routes pass
// these as `config.swaggerTransform`, which @fastify/swagger applies to the document only.
// Also the document's final pass, which shares the problem responses (shareProblemResponses), and
// the docs page's own options (docsPage).
import type { SwaggerTransform } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '../domain/idempotency.js';
import { PROBLEM_RESPONSE_NAME } from '../wire/index.js';

export const IdempotencyKeyHeader = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      pattern: '^[\\x21-\\x7e]+$',
      description:
        'Makes retries safe: the same key with the same request within 24 hours replays the first 202 (with `Idempotent-Replayed: true`) instead of queueing again; with another request it is a 422, and while the first is still being handled a 409. Printable ASCII without spaces, per organisation.',
      examples: ['ingest-2026-03-15-batch-0042'],
    }),
  ),
});

const IDEMPOTENT_REPLAYED = {
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: 'Present when this answer replays the first request with the same Idempotency-Key.',
  },
};

export interface DocumentOnly {
  /** The request body as the document shows it (validated by the route itself). */
  body?: TSchema;
  consumes?: string[];
  /** Request headers as the document shows them (checked by the route itself). */
  headers?: TObject;
  /** Response headers to show on the success response, keyed by status. */
  responseHeaders?: Record<number, Record<string, { type: string; enum?: string[]; description: string }>>;
}

/** A swaggerTransform that adds `extra` to the route's entry in the OpenAPI document. */
export function documentOnly(extra: DocumentOnly): SwaggerTransform {
  return ({ schema, url }) => {
    const response = { ...(schema.response as Record<string, object> | undefined) };
    for (const [status, headers] of Object.entries(extra.responseHeaders ?? {})) {
      const existing = response[status];
      if (existing) response[status] = { ...existing, headers };
    }
    return {
      url,
      schema: {
        ...schema,
        ...(extra.body ? { body: extra.body } : {}),
        ...(extra.consumes ? { consumes: extra.consumes } : {}),
        ...(extra.headers ? { headers: extra.headers } : {}),
        response,
      },
    };
  };
}

/** The Idempotency-Key header and the Idempotent-Replayed answer of an ingest operation. */
export const idempotentIngest: DocumentOnly = {
  headers: IdempotencyKeyHeader,
  responseHeaders: { 202: IDEMPOTENT_REPLAYED },
};

type JsonObject = Record<string, unknown>;

/**
 * The document's transformObject: every problem response (see problemResponses) is stored once
 * under components/responses by its name and referenced from each operation, so a client
 * generator sees one type per error response and the document stays small. Two different
 * responses under one name are a programming error and stop the document from being built.
 */
export function shareProblemResponses<T extends object>(document: T): T {
  const doc = document as JsonObject;
  const shared: Record<string, unknown> = {};
  const serialised = new Map<string, string>();
  for (const pathItem of Object.values((doc.paths ?? {}) as Record<string, JsonObject>)) {
    for (const operation of Object.values(pathItem) as JsonObject[]) {
      const responses = operation?.responses as Record<string, JsonObject> | undefined;
      if (!responses) continue;
      for (const [status, response] of Object.entries(responses)) {
        const media = (response.content as Record<string, JsonObject> | undefined)?.[
          'application/problem+json'
        ];
        const name = media?.[PROBLEM_RESPONSE_NAME];
        if (typeof name !== 'string') continue;
        const { [PROBLEM_RESPONSE_NAME]: _name, ...rest } = media as JsonObject;
        const clean = { ...response, content: { 'application/problem+json': rest } };
        const text = JSON.stringify(clean);
        const known = serialised.get(name);
        if (known !== undefined && known !== text) {
          throw new Error(`two different problem responses are named ${name}: give one of them another name`);
        }
        serialised.set(name, text);
        shared[name] = clean;
        responses[status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
  const components = (doc.components ?? {}) as JsonObject;
  const sorted = Object.fromEntries(Object.entries(shared).sort(([a], [b]) => a.localeCompare(b)));
  return { ...document, components: { ...components, responses: sorted } };
}

/**
 * The docs page (/docs, Swagger UI) under docindex's name: its title, and docindex's mark (the
 * console's favicon, when the build has the console) as its icon and in its top bar, linking to
 * the console, instead of the UI plugin's own branding.
 */
export function docsPage(mark: Buffer | null): FastifySwaggerUiOptions {
  return {
    routePrefix: '/docs',
    theme: {
      title: 'docindex API',
      ...(mark === null
        ? {}
        : {
            favicon: [
              { filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: mark },
            ],
          }),
    },
    // null: no logo at all rather than the plugin's default one.
    logo: mark === null ? (null as never) : { type: 'image/svg+xml', content: mark, href: '/console' },
  };
}
