// The closed set of errors the API can answer with. Domain code throws these through the
// factories in ERRORS; the HTTP layer renders each one as RFC 9457 problem+json.

export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'partition_forbidden'
  | 'principal_forbidden'
  | 'partition_mismatch'
  | 'partition_deleting'
  | 'not_found'
  | 'route_not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_use'
  | 'not_ready'
  | 'version_changed'
  | 'cannot_reprocess'
  | 'sync_in_progress'
  | 'secrets_key_unset'
  | 'original_not_kept'
  | 'rate_limited'
  | 'backlog_full'
  | 'headers_too_large'
  | 'overloaded'
  | 'service_unavailable'
  | 'semantic_search_unavailable'
  | 'embeddings_unavailable'
  | 'rerank_unavailable'
  | 'internal';

export interface FieldError {
  /** JSON Pointer (RFC 6901) into the request body, or `/query/<name>` / `/header/<name>`. */
  pointer: string;
  message: string;
}

const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  partition_forbidden: 403,
  principal_forbidden: 403,
  partition_mismatch: 409,
  partition_deleting: 409,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  idempotency_key_in_use: 409,
  not_ready: 409,
  version_changed: 409,
  cannot_reprocess: 409,
  sync_in_progress: 409,
  secrets_key_unset: 400,
  original_not_kept: 410,
  idempotency_key_reused: 422,
  rate_limited: 429,
  backlog_full: 429,
  headers_too_large: 431,
  overloaded: 503,
  service_unavailable: 503,
  semantic_search_unavailable: 400,
  embeddings_unavailable: 503,
  rerank_unavailable: 400,
  internal: 500,
};

const TITLE: Record<ErrorCode, string> = {
  invalid_request: 'Invalid request',
  unauthorized: 'Unauthorized',
  insufficient_scope: 'Insufficient scope',
  partition_forbidden: 'Partition not allowed',
  principal_forbidden: 'Principal not allowed',
  partition_mismatch: 'Partition mismatch',
  partition_deleting: 'Partition being deleted',
  not_found: 'Not found',
  route_not_found: 'No such route',
  method_not_allowed: 'Method not allowed',
  request_timeout: 'Request timeout',
  payload_too_large: 'Payload too large',
  uri_too_long: 'URI too long',
  unsupported_media_type: 'Unsupported media type',
  idempotency_key_in_use: 'Idempotency key in use',
  not_ready: 'Not ready',
  version_changed: 'Document version changed',
  cannot_reprocess: 'Cannot reprocess',
  sync_in_progress: 'Sync in progress',
  secrets_key_unset: 'Credentials cannot be stored',
  original_not_kept: 'Original not kept',
  idempotency_key_reused: 'Idempotency key reused',
  rate_limited: 'Too many requests',
  backlog_full: 'Backlog full',
  headers_too_large: 'Request headers too large',
  overloaded: 'Service overloaded',
  service_unavailable: 'Service unavailable',
  semantic_search_unavailable: 'Semantic search unavailable',
  embeddings_unavailable: 'Embedding provider unavailable',
  rerank_unavailable: 'Reranking unavailable',
  internal: 'Internal error',
};

export class ApiError extends Error {
  readonly status: number;
  readonly title: string;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; retryAfterSeconds?: number } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = STATUS[code];
    this.title = TITLE[code];
  }
}

function insufficientScopeFor(scope: string, operation: string): ApiError {
  return new ApiError(
    'insufficient_scope',
    `This API key lacks the \`${scope}\` scope, which ${operation} needs; issue a key with that scope.`,
  );
}

export const ERRORS = {
  invalid: (detail: string, errors?: FieldError[]) =>
    new ApiError('invalid_request', detail, errors ? { errors } : {}),
  unauthorized: (detail = 'A valid API key is required: send `Authorization: Bearer <key>`.') =>
    new ApiError('unauthorized', detail),
  adminUnauthorized: () =>
    new ApiError(
      'unauthorized',
      'A valid admin token is required: send `Authorization: Bearer <ADMIN_TOKEN>`.',
    ),
  insufficientScope: (scope: string, method: string, route: string) =>
    insufficientScopeFor(scope, `${method} ${route}`),
  /** `operation` names what was refused, e.g. `the MCP tool \`search\``. */
  insufficientScopeFor: (scope: string, operation: string) => insufficientScopeFor(scope, operation),
  partitionForbidden: (name: string) =>
    new ApiError(
      'partition_forbidden',
      `This API key is limited to other partitions than "${name}"; use a key that may see it, or name one of the key's partitions.`,
    ),
  /** Evaluations and sources span the whole org: a key limited to partitions may not use them. */
  needsEveryPartition: (what: 'evaluations' | 'sources') =>
    new ApiError(
      'partition_forbidden',
      `${what === 'evaluations' ? 'Evaluations rank' : 'Sources write into'} every partition of the organisation, so they need an API key that is not limited to partitions.`,
    ),
  principalForbidden: (name: string) =>
    new ApiError(
      'principal_forbidden',
      `This API key acts for other principals than "${name}"; a request may name only principals its key is bound to.`,
    ),
  /** Evaluations, sources and partition deletion span documents whatever their access lists. */
  needsUnboundKey: (what: 'evaluations' | 'sources' | 'partition deletion') =>
    new ApiError(
      'principal_forbidden',
      `${what === 'evaluations' ? 'Evaluations rank' : what === 'sources' ? 'Sources write into' : 'Deleting a partition removes'} documents whatever their access lists, so ${what === 'partition deletion' ? 'it needs' : 'they need'} an API key that is not bound to principals.`,
    ),
  /** A restricted key ingesting by the external_id of a document that it may not see. */
  externalIdNotVisible: (externalId: string) =>
    new ApiError(
      'principal_forbidden',
      `A document with external_id "${externalId}" exists that this API key's principals may not see; a key may send new versions only of documents it can see.`,
    ),
  partitionMismatch: (externalId: string, partition: string) =>
    new ApiError(
      'partition_mismatch',
      `A document with external_id "${externalId}" exists in another partition than "${partition}"; a document's partition is fixed for its life: ingest it into its own partition, or delete it first.`,
    ),
  partitionDeleting: (name: string) =>
    new ApiError(
      'partition_deleting',
      `Partition "${name}" is being deleted; ingest into it once GET /v1/partitions no longer lists it.`,
      { retryAfterSeconds: 5 },
    ),
  partitionNotFound: (name: string) => new ApiError('not_found', `No partition named "${name}".`),
  orgNotFound: (id: string) => new ApiError('not_found', `No organisation with id ${id}.`),
  keyNotFound: (id: string) => new ApiError('not_found', `No API key with id ${id}.`),
  documentNotFound: (id: string) => new ApiError('not_found', `No document with id ${id}.`),
  webhookNotFound: (id: string) => new ApiError('not_found', `No webhook endpoint with id ${id}.`),
  evaluationNotFound: (id: string) => new ApiError('not_found', `No evaluation with id ${id}.`),
  notReady: (id: string, status: string, what = 'its chunks can be read once it is ready') =>
    new ApiError('not_ready', `Document ${id} is ${status}; ${what}.`),
  versionChanged: (id: string, was: number, now: number) =>
    new ApiError(
      'version_changed',
      `Document ${id} changed from version ${was} to ${now} while it was being read; read it again from the start.`,
    ),
  noOriginalFile: (id: string) =>
    new ApiError(
      'not_found',
      `Document ${id} has no original file (it was sent as JSON text, or its download failed); GET /v1/documents/${id}/content returns its text once it is ready.`,
    ),
  cannotReprocess: (id: string, why: string) =>
    new ApiError('cannot_reprocess', `Document ${id} cannot be reprocessed: ${why}.`),
  originalNotKept: (id: string) =>
    new ApiError(
      'original_not_kept',
      `Document ${id}'s original file was deleted once it was indexed (the server runs with KEEP_ORIGINALS=false); GET /v1/documents/${id}/content returns its text.`,
    ),
  routeNotFound: (method: string, url: string) =>
    new ApiError('route_not_found', `No route for ${method} ${url.split('?')[0]}.`),
  payloadTooLarge: (detail: string) => new ApiError('payload_too_large', detail),
  unsupportedMediaType: (detail: string) => new ApiError('unsupported_media_type', detail),
  idempotencyReused: () =>
    new ApiError(
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
    ),
  idempotencyInUse: () =>
    new ApiError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still being processed; retry after it completes.',
      { retryAfterSeconds: 1 },
    ),
  rateLimited: (limit: number, retryAfterSeconds: number) =>
    new ApiError(
      'rate_limited',
      `Rate limit of ${limit} requests per minute exceeded; retry in ${retryAfterSeconds} s.`,
      { retryAfterSeconds },
    ),
  webhookBacklogFull: (id: string, max: number, retryAfterSeconds: number) =>
    new ApiError(
      'backlog_full',
      `Webhook endpoint ${id} already has ${max} messages waiting to be delivered (WEBHOOK_MAX_PENDING); retry once its receiver has caught up (GET /v1/webhooks/${id}/deliveries shows what is pending).`,
      { retryAfterSeconds },
    ),
  overloaded: (retryAfterSeconds: number) =>
    new ApiError('overloaded', 'Too many documents are waiting to be processed; retry later.', {
      retryAfterSeconds,
    }),
  databaseShareBusy: () =>
    new ApiError(
      'overloaded',
      "Too many of this organisation's requests are using the database at once; retry shortly.",
      { retryAfterSeconds: 1 },
    ),
  semanticSearchUnavailable: (mode: string) =>
    new ApiError(
      'semantic_search_unavailable',
      `Mode "${mode}" needs an embedding provider, and none is configured (EMBEDDINGS=none); use mode "keyword".`,
      { errors: [{ pointer: '/mode', message: 'needs an embedding provider' }] },
    ),
  embeddingsUnavailable: (reason: string, retryAfterSeconds: number) =>
    new ApiError(
      'embeddings_unavailable',
      `The embedding provider could not embed the query (${reason}); retry later, or use mode "keyword" or "hybrid".`,
      { retryAfterSeconds },
    ),
  rerankUnavailable: () =>
    new ApiError(
      'rerank_unavailable',
      'Reranking was asked for, and no reranker is configured (RERANK=none); leave `rerank` out or set it to false.',
      { errors: [{ pointer: '/rerank', message: 'needs a reranker' }] },
    ),
  unavailable: (what: string) =>
    new ApiError('service_unavailable', `${what} is unavailable; retry shortly.`, { retryAfterSeconds: 5 }),
};

export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

export function titleOf(code: ErrorCode): string {
  return TITLE[code];
}
