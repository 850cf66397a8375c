// build(deps) → a Fastify instance, not listening: tests call inject(), start/serve listens.
import http from 'node:http';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { isDateTime } from './domain/date-time.js';
import { ERRORS } from './domain/errors.js';
import { prefixedId } from './domain/ids-and-hashes.js';
import { noopTracer } from './domain/ports.js';
import type { AppDeps } from './http/deps.js';
import { docsPage, shareProblemResponses } from './http/openapi.js';
import { adminScope } from './http/plugins/admin.js';
import { authenticatedScope } from './http/plugins/authenticated.js';
import { requestTracing } from './http/plugins/tracing.js';
import { handleError, sendProblem } from './http/problem.js';
import { answerAfterBody } from './http/refused-body.js';
import {
  clientErrorHandler,
  frameworkErrorHandler,
  plainIntegerQuery,
  refuseContentEncoding,
  registerJsonParser,
} from './http/request-parsing.js';
import { createKeyRoute } from './http/routes/admin/create-key.js';
import { createOrgRoute } from './http/routes/admin/create-org.js';
import { getOrgRoute } from './http/routes/admin/get-org.js';
import { listKeysRoute } from './http/routes/admin/list-keys.js';
import { listOrgsRoute } from './http/routes/admin/list-orgs.js';
import { purgeOrgRoute } from './http/routes/admin/purge-org.js';
import { revokeKeyRoute } from './http/routes/admin/revoke-key.js';
import { updateOrgRoute } from './http/routes/admin/update-org.js';
import { consoleRoutes, readConsoleFile, rootRedirect } from './http/routes/console.js';
import { documentChunksRoute } from './http/routes/documents/chunks.js';
import { documentContentRoute } from './http/routes/documents/content.js';
import { deleteDocumentRoute } from './http/routes/documents/delete.js';
import { deleteDocumentsRoute } from './http/routes/documents/delete-many.js';
import { documentFileRoute } from './http/routes/documents/file.js';
import { getDocumentRoute } from './http/routes/documents/get.js';
import { listDocumentsRoute } from './http/routes/documents/list.js';
import { patchDocumentRoute } from './http/routes/documents/patch.js';
import { replaceContentRoute } from './http/routes/documents/replace-content.js';
import { reprocessDocumentRoute } from './http/routes/documents/reprocess.js';
import { createEvaluationRoute } from './http/routes/evaluations/create.js';
import { getEvaluationRoute } from './http/routes/evaluations/get.js';
import { listEvaluationsRoute } from './http/routes/evaluations/list.js';
import { ingestFileRoute, MAX_METADATA_PART_BYTES } from './http/routes/ingest/file.js';
import { ingestTextRoute } from './http/routes/ingest/text.js';
import { ingestUrlRoute } from './http/routes/ingest/url.js';
import { mcpEndpoint } from './http/routes/mcp/endpoint.js';
import { operationsRoutes } from './http/routes/operations.js';
import { orgRoute } from './http/routes/org/get.js';
import { deletePartitionRoute } from './http/routes/partitions/delete.js';
import { listPartitionsRoute } from './http/routes/partitions/list.js';
import { queryRoute } from './http/routes/query/post.js';
import { createSourceRoute } from './http/routes/sources/create.js';
import { deleteSourceRoute } from './http/routes/sources/delete.js';
import { getSourceRoute } from './http/routes/sources/get.js';
import { listSourcesRoute } from './http/routes/sources/list.js';
import { patchSourceRoute } from './http/routes/sources/patch.js';
import { sourceRunsRoute } from './http/routes/sources/runs.js';
import { syncSourceRoute } from './http/routes/sources/sync.js';
import { usageRoute } from './http/routes/usage/get.js';
import { createWebhookRoute } from './http/routes/webhooks/create.js';
import { deleteWebhookRoute } from './http/routes/webhooks/delete.js';
import { webhookDeliveriesRoute } from './http/routes/webhooks/deliveries.js';
import { getWebhookRoute } from './http/routes/webhooks/get.js';
import { listWebhooksRoute } from './http/routes/webhooks/list.js';
import { testWebhookRoute } from './http/routes/webhooks/test.js';

export type { AppDeps } from './http/deps.js';

const MAX_FORM_PARTS = 10;

/** The document's tags; `admin` only where the admin API exists (ADMIN_TOKEN set). */
const TAGS = [
  { name: 'ingest', description: 'Submit documents (scope `ingest`).' },
  {
    name: 'documents',
    description: 'Read (scope `read`), change and delete (scope `write`) documents.',
  },
  { name: 'query', description: 'Search (scope `query`).' },
  {
    name: 'evaluations',
    description:
      'Retrieval quality measured on your judged queries: nDCG@10, Recall@k, MRR@10 (scope `query`).',
  },
  {
    name: 'partitions',
    description:
      'The partitions documents belong to: their sizes (scope `read`) and deletion (scope `write`).',
  },
  { name: 'usage', description: 'Query volume and rate limit (scope `read`).' },
  { name: 'org', description: 'The organisation an API key belongs to (scope `read`).' },
  {
    name: 'webhooks',
    description: 'Signed document and source events sent to your endpoints (scope `webhooks`).',
  },
  {
    name: 'sources',
    description: 'Collections (S3 buckets) kept in sync with your documents (scope `sources`).',
  },
  {
    name: 'admin',
    description:
      'Organisations and their API keys, behind `Authorization: Bearer <ADMIN_TOKEN>`. Present only when the server has ADMIN_TOKEN set.',
  },
];

/** How long an idle keep-alive connection is kept open. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

export async function buildApp(deps: AppDeps, logger?: FastifyBaseLogger): Promise<FastifyInstance> {
  const requestTimeout = deps.http?.requestTimeoutMs ?? 300_000;
  const headersTimeout = deps.http?.headersTimeoutMs ?? 10_000;
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    // Node checks these timeouts every connectionsCheckingInterval (30 s by default): check every
    // second so a slow-loris client is cut off close to headersTimeout.
    serverFactory: (handler) => {
      const server = http.createServer(
        { headersTimeout, requestTimeout, connectionsCheckingInterval: 1_000 },
        handler,
      );
      // Fastify's own default, which it sets only on servers it creates. Node's 5 s is barely
      // above the 4 s after which Node's fetch stops reusing an idle connection: a busy server,
      // running its timers before its reads, closed a connection the client had just sent on.
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      return server;
    },
    bodyLimit: deps.limits.maxJsonBodyBytes,
    trustProxy: deps.http?.trustProxy ?? false,
    genReqId: () => prefixedId('req'),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
  // First: a request refused by the hooks below still has its span.
  requestTracing(app, deps.tracer ?? noopTracer);
  registerJsonParser(app, deps.limits.maxJsonBodyBytes);
  refuseContentEncoding(app);

  // Bodies are validated strictly (no coercion, unknown fields rejected); query strings and
  // path parameters may be parsed from strings.
  const bodyAjv = addFormats.default(
    new Ajv({
      coerceTypes: false,
      useDefaults: true,
      removeAdditional: false,
      allErrors: false,
      strict: false,
    }),
  );
  const queryAjv = addFormats.default(
    new Ajv({
      coerceTypes: true,
      useDefaults: true,
      removeAdditional: false,
      allErrors: false,
      strict: false,
    }),
  );
  // One reading of a date-time everywhere: RFC 3339 checked against the calendar (no :60 seconds,
  // no 24:00, no 30 February), which is what domain/date-time.ts parses afterwards.
  for (const ajv of [bodyAjv, queryAjv]) ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'body') return bodyAjv.compile(schema);
    const validate = queryAjv.compile(schema);
    return httpPart === 'querystring' ? plainIntegerQuery(schema, validate) : validate;
  });

  // A refusal waits for the rest of the body (within bounds), so the client can read it.
  app.setErrorHandler(answerAfterBody(deps.limits, handleError));
  app.setNotFoundHandler((request, reply) => {
    const error = ERRORS.routeNotFound(request.method, request.url);
    return sendProblem(request, reply, error.code, error.status, error.detail);
  });

  await app.register(swagger, {
    transformObject: (document) =>
      shareProblemResponses('openapiObject' in document ? document.openapiObject : document.swaggerObject),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'docindex API',
        version: deps.version,
        description:
          'Multi-tenant document ingestion, indexing and retrieval. Every /v1 request needs `Authorization: Bearer <API key>`. Errors are RFC 9457 problem+json.',
        contact: { name: 'docindex', url: 'https://docindex.dev' },
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      // Relative: the paths are served by the server that serves this document.
      servers: [{ url: '/', description: 'This docindex server' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key (dix_…). Each operation names the key scope it needs (ingest, query, read, write, webhooks, sources); a key without it gets 403 `insufficient_scope`.',
          },
          adminToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'The ADMIN_TOKEN the server was started with (admin API only).',
          },
        },
      },
      security: [{ bearer: [] }],
      tags: deps.admin ? TAGS : TAGS.filter((tag) => tag.name !== 'admin'),
    },
  });
  await app.register(swaggerUi, docsPage(readConsoleFile('favicon.svg')));

  await app.register(multipart, {
    limits: {
      fileSize: deps.limits.maxUploadBytes,
      // One more than allowed, so a second file part reaches the route and gets a clear 400.
      files: 2,
      parts: MAX_FORM_PARTS,
      fields: MAX_FORM_PARTS,
      fieldSize: MAX_METADATA_PART_BYTES,
      headerPairs: 100,
    },
    throwFileSizeLimit: true,
  });

  operationsRoutes(app, deps);
  rootRedirect(app);
  await app.register(consoleRoutes, { prefix: '/console' });

  await app.register(
    async (v1) => {
      await authenticatedScope(deps)(v1);
      ingestTextRoute(v1, deps);
      ingestFileRoute(v1, deps);
      ingestUrlRoute(v1, deps);
      getDocumentRoute(v1, deps);
      listDocumentsRoute(v1, deps);
      documentChunksRoute(v1, deps);
      documentContentRoute(v1, deps);
      documentFileRoute(v1, deps);
      patchDocumentRoute(v1, deps);
      deleteDocumentRoute(v1, deps);
      deleteDocumentsRoute(v1, deps);
      replaceContentRoute(v1, deps);
      reprocessDocumentRoute(v1, deps);
      queryRoute(v1, deps);
      createEvaluationRoute(v1, deps);
      listEvaluationsRoute(v1, deps);
      getEvaluationRoute(v1, deps);
      listPartitionsRoute(v1, deps);
      deletePartitionRoute(v1, deps);
      usageRoute(v1, deps);
      orgRoute(v1);
      createWebhookRoute(v1, deps);
      listWebhooksRoute(v1, deps);
      getWebhookRoute(v1, deps);
      deleteWebhookRoute(v1, deps);
      testWebhookRoute(v1, deps);
      webhookDeliveriesRoute(v1, deps);
      createSourceRoute(v1, deps);
      listSourcesRoute(v1, deps);
      getSourceRoute(v1, deps);
      patchSourceRoute(v1, deps);
      deleteSourceRoute(v1, deps);
      syncSourceRoute(v1, deps);
      sourceRunsRoute(v1, deps);
    },
    { prefix: '/v1' },
  );

  // The MCP tools over HTTP: the same keys and rate limit, with the scope checked per tool.
  await app.register(async (mcp) => {
    await authenticatedScope(deps, { perToolScopes: true })(mcp);
    mcpEndpoint(mcp, deps);
  });

  const { admin } = deps;
  if (admin) {
    await app.register(
      async (scope) => {
        await adminScope(deps, admin.token)(scope);
        createOrgRoute(scope, admin.orgs);
        listOrgsRoute(scope, admin.orgs);
        getOrgRoute(scope, admin.orgs);
        updateOrgRoute(scope, admin.orgs);
        purgeOrgRoute(scope, admin.orgs);
        createKeyRoute(scope, admin.orgs);
        listKeysRoute(scope, admin.orgs);
        revokeKeyRoute(scope, admin.orgs);
      },
      { prefix: '/admin/v1' },
    );
  }

  return app;
}
