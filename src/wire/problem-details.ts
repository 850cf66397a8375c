// RFC 9457 problem details (application/problem+json): the Problem schema, and each route's error
// responses with an example of each code (problemResponses), which the OpenAPI document shows.
import { Type } from '@sinclair/typebox';
import { ApiError, ERRORS, type ErrorCode, titleOf } from '../domain/errors.js';
import { EXAMPLE_DOCUMENT_ID, EXAMPLE_REQUEST_ID } from './common.js';

const PROBLEM_PROPERTIES = {
  type: Type.String({ description: 'https://docindex.dev/problems/<code>' }),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String({ description: 'What went wrong, for a person to read.' }),
  errors: Type.Optional(
    Type.Array(
      Type.Object({
        pointer: Type.String({
          description: 'JSON Pointer into the body, or `/query/<name>`, `/header/<name>`.',
        }),
        message: Type.String(),
      }),
      { description: 'Each invalid part of the request (validation errors).' },
    ),
  ),
  request_id: Type.String({ description: 'Quote it when asking about a request; it is in the logs.' }),
};

export const Problem = Type.Object(
  { ...PROBLEM_PROPERTIES, code: Type.String({ description: 'Stable, machine-readable error code.' }) },
  { description: 'RFC 9457 problem details (application/problem+json).' },
);

/** What each error code means, for the OpenAPI document. */
const PROBLEM_MEANINGS: Partial<Record<ErrorCode, string>> = {
  invalid_request:
    'The request breaks a rule (a field, query parameter or header); `errors[].pointer` names each part.',
  unauthorized: 'No credentials, or credentials that are invalid, expired or revoked.',
  insufficient_scope: 'The API key lacks the scope this operation needs.',
  partition_forbidden:
    'The API key is limited to partitions, and the request names (or ingests into) another one.',
  principal_forbidden:
    'The API key is bound to principals, and the request names another one, uses what spans every access list, or sends a new version (by `external_id`) of a document they may not see.',
  partition_mismatch:
    'A document with this external_id exists in another partition; a document’s partition never changes.',
  partition_deleting: 'The partition is being deleted; ingest into it once the purge is done.',
  not_found: 'Nothing with this id (another organisation’s ids get the same answer).',
  not_ready: 'The document is not ready: queued, processing or failed.',
  version_changed:
    'A new version of the document was swapped in since the cursor was made: start again without a cursor.',
  original_not_kept: 'The original file was deleted once indexed (KEEP_ORIGINALS=false).',
  cannot_reprocess:
    'The document has nothing to reprocess from (no text or original kept), or a newer version is already on its way.',
  payload_too_large: 'The body, the file or a form part is larger than the limit.',
  sync_in_progress: 'The source has a run queued or running; one run per source at a time.',
  secrets_key_unset:
    'The source has credentials and the server runs without `SECRETS_KEY`, so it cannot store them encrypted.',
  unsupported_media_type: 'The Content-Type, Content-Encoding or file format is not accepted.',
  idempotency_key_in_use: 'A request with this Idempotency-Key is still being handled.',
  idempotency_key_reused: 'This Idempotency-Key was already used with a different request.',
  rate_limited: 'Over the requests-per-minute limit.',
  backlog_full:
    'The webhook endpoint has `WEBHOOK_MAX_PENDING` messages waiting already: no test message is queued until its receiver catches up.',
  overloaded: 'Too many documents are waiting to be processed.',
  service_unavailable: 'A backing service (database, queue) cannot be reached.',
  semantic_search_unavailable:
    'Mode `semantic` or `hybrid` was asked, and no embedding provider is configured.',
  embeddings_unavailable:
    'Mode `semantic`: the embedding provider failed to embed the query, or failed repeatedly and is skipped for a cool-down (an outage; `hybrid` answers keyword results instead).',
  rerank_unavailable: '`rerank: true` was asked, and no reranker is configured.',
};

/** The sample error of each code that the examples show, unless a route passes its own. */
const SAMPLE_ERRORS: Partial<Record<ErrorCode, () => ApiError>> = {
  invalid_request: () =>
    ERRORS.invalid('Invalid request: /chunk_size must be <= 4096.', [
      { pointer: '/chunk_size', message: 'must be <= 4096' },
    ]),
  unauthorized: () => ERRORS.unauthorized(),
  insufficient_scope: () => ERRORS.insufficientScope('ingest', 'POST', '/v1/ingest'),
  partition_forbidden: () => ERRORS.partitionForbidden('legal'),
  principal_forbidden: () => ERRORS.principalForbidden('group:finance'),
  partition_mismatch: () => ERRORS.partitionMismatch('crm-ticket-4711', 'support'),
  partition_deleting: () => ERRORS.partitionDeleting('support'),
  not_found: () => ERRORS.documentNotFound(EXAMPLE_DOCUMENT_ID),
  not_ready: () => ERRORS.notReady(EXAMPLE_DOCUMENT_ID, 'processing'),
  version_changed: () => ERRORS.versionChanged(EXAMPLE_DOCUMENT_ID, 1, 2),
  original_not_kept: () => ERRORS.originalNotKept(EXAMPLE_DOCUMENT_ID),
  cannot_reprocess: () =>
    ERRORS.cannotReprocess(EXAMPLE_DOCUMENT_ID, 'version 3 is still being processed; retry once it is ready'),
  payload_too_large: () => ERRORS.payloadTooLarge('The request body is larger than the limit.'),
  unsupported_media_type: () =>
    ERRORS.unsupportedMediaType('Content-Type "text/plain" is not accepted here.'),
  idempotency_key_in_use: () => ERRORS.idempotencyInUse(),
  idempotency_key_reused: () => ERRORS.idempotencyReused(),
  rate_limited: () => ERRORS.rateLimited(600, 42),
  backlog_full: () => ERRORS.webhookBacklogFull('wh_8f14e45fceea167a5a36dedd4bea2543', 10_000, 60),
  overloaded: () => ERRORS.overloaded(30),
  service_unavailable: () => ERRORS.unavailable('The database'),
  semantic_search_unavailable: () => ERRORS.semanticSearchUnavailable('hybrid'),
  embeddings_unavailable: () => ERRORS.embeddingsUnavailable('server_error', 5),
  rerank_unavailable: () => ERRORS.rerankUnavailable(),
};

/** An error a route shows with its own example (and a name for the shared response it gets). */
export interface ProblemSample {
  /** PascalCase, unique per distinct sample: "OrgNotFound". */
  name: string;
  error: ApiError;
}

function sampleOf(entry: ErrorCode | ProblemSample): ProblemSample {
  if (typeof entry !== 'string') return entry;
  const error = SAMPLE_ERRORS[entry]?.() ?? new ApiError(entry, `${titleOf(entry)}.`);
  const name = entry.replace(/(^|_)([a-z])/g, (_match, _sep: string, letter: string) => letter.toUpperCase());
  return { name, error };
}

function problemExample(error: ApiError) {
  return {
    type: `https://docindex.dev/problems/${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
    request_id: EXAMPLE_REQUEST_ID,
  };
}

/**
 * The error responses of a route, keyed by status, for its `response`: each is
 * application/problem+json whose `code` is one of the codes given for that status, with an example
 * of each, and `Retry-After` / `WWW-Authenticate` where those codes send them. Pass a ProblemSample
 * instead of a code to show a route's own detail in the example (e.g. "No organisation with id …").
 * The OpenAPI document shares each distinct response under components/responses (by its name).
 */
export function problemResponses(
  ...errors: Array<ErrorCode | ProblemSample>
): Record<number, ProblemResponse> {
  const byStatus = new Map<number, ProblemSample[]>();
  for (const entry of errors) {
    const sample = sampleOf(entry);
    const same = byStatus.get(sample.error.status) ?? [];
    if (!same.some((s) => s.error.code === sample.error.code)) same.push(sample);
    byStatus.set(sample.error.status, same);
  }
  const out: Record<number, ProblemResponse> = {};
  for (const [status, samples] of byStatus) out[status] = problemResponse(samples);
  return out;
}

/** The extension naming a problem response; http/openapi.ts moves the response to components/responses. */
export const PROBLEM_RESPONSE_NAME = 'x-docindex-response-name';

export interface ProblemResponse {
  description: string;
  headers?: Record<string, { type: string; minimum?: number; description: string }>;
  content: {
    'application/problem+json': {
      schema: ReturnType<typeof Type.Object>;
      examples: Record<string, { summary: string; value: unknown }>;
      [PROBLEM_RESPONSE_NAME]: string;
    };
  };
}

function problemResponse(samples: ProblemSample[]): ProblemResponse {
  const codes = samples.map((s) => s.error.code);
  const description = codes
    .map((code) => `\`${code}\`: ${PROBLEM_MEANINGS[code] ?? titleOf(code)}`)
    .join(' ');
  const retrying = samples
    .filter((s) => s.error.extra.retryAfterSeconds !== undefined)
    .map((s) => s.error.code);
  const headers: NonNullable<ProblemResponse['headers']> = {};
  if (retrying.length > 0) {
    headers['Retry-After'] = {
      type: 'integer',
      minimum: 0,
      description: `Seconds to wait before retrying (with ${retrying.map((c) => `\`${c}\``).join(', ')}).`,
    };
  }
  if (codes.includes('unauthorized')) {
    headers['WWW-Authenticate'] = {
      type: 'string',
      description: 'The challenge: `Bearer realm="docindex"`.',
    };
  }
  const schema = Type.Object(
    {
      ...PROBLEM_PROPERTIES,
      code: Type.Unsafe<ErrorCode>({
        type: 'string',
        enum: codes,
        description: 'Stable, machine-readable error code.',
      }),
    },
    { description: Problem.description },
  );
  const examples = Object.fromEntries(
    samples.map(({ error }) => [error.code, { summary: error.title, value: problemExample(error) }]),
  );
  return {
    description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: {
      'application/problem+json': {
        schema,
        examples,
        [PROBLEM_RESPONSE_NAME]: `${samples.map((s) => s.name).join('Or')}Problem`,
      },
    },
  };
}

/** Errors every authenticated /v1 route can answer with. */
export const COMMON_ERRORS: ErrorCode[] = [
  'invalid_request',
  'unauthorized',
  'insufficient_scope',
  'rate_limited',
  'service_unavailable',
];
