// Renders every error as RFC 9457 problem+json. Domain errors keep their code; framework errors
// (bad JSON, schema violations, body limits, multipart limits) are mapped to the closest 4xx,
// so bad input never becomes a 500.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DATE_TIME_RULE } from '../domain/date-time.js';
import { ApiError, type ErrorCode, type FieldError, titleOf } from '../domain/errors.js';

const TYPE_BASE = 'https://docindex.dev/problems/';

interface ValidationIssue {
  instancePath: string;
  /** Set by Ajv on the errors of a `propertyNames` subschema: the key that failed it. */
  propertyName?: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  status: number,
  detail: string,
  extra: { errors?: FieldError[]; retryAfterSeconds?: number } = {},
): FastifyReply {
  if (extra.retryAfterSeconds !== undefined) reply.header('retry-after', String(extra.retryAfterSeconds));
  if (code === 'unauthorized') reply.header('www-authenticate', 'Bearer realm="docindex"');
  return reply
    .code(status)
    .type('application/problem+json')
    .serializer(JSON.stringify)
    .send({
      type: TYPE_BASE + code,
      title: titleOf(code),
      status,
      detail,
      code,
      ...(extra.errors ? { errors: extra.errors } : {}),
      request_id: String(request.id),
    });
}

export function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ApiError) {
    return sendProblem(request, reply, error.code, error.status, error.detail, error.extra);
  }
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fastifyError.validation) {
    const errors = withoutUnionNoise(fastifyError.validation).map((issue) =>
      toFieldError(issue, fastifyError.validationContext),
    );
    const first = errors[0];
    const detail = first ? `${first.pointer || '/'} ${first.message}` : 'The request is invalid.';
    return sendProblem(request, reply, 'invalid_request', 400, `Invalid request: ${detail}.`, { errors });
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return sendProblem(
        request,
        reply,
        'payload_too_large',
        413,
        'The request body is larger than the limit.',
      );
    case 'FST_REQ_FILE_TOO_LARGE':
      return sendProblem(request, reply, 'payload_too_large', 413, 'The file is larger than the limit.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return sendProblem(
        request,
        reply,
        'unsupported_media_type',
        415,
        `Content-Type ${JSON.stringify(request.headers['content-type'] ?? '')} is not accepted here.`,
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return sendProblem(
        request,
        reply,
        'invalid_request',
        400,
        'The request body is empty; send a JSON object.',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return sendProblem(request, reply, 'invalid_request', 400, 'The request body is not valid JSON.');
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return sendProblem(
        request,
        reply,
        'invalid_request',
        400,
        'Too many form parts: send one `file` part and at most one `metadata` part.',
      );
    case 'FST_PROTO_VIOLATION':
    case 'FST_MP_PREMATURE_CLOSE':
      return sendProblem(
        request,
        reply,
        'invalid_request',
        400,
        `Invalid multipart body: ${fastifyError.message}.`,
      );
    default:
      break;
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Body parser errors (bad JSON, prototype poisoning, malformed multipart) land here.
    const code: ErrorCode =
      status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'invalid_request';
    const mapped = code === 'invalid_request' ? 400 : status;
    return sendProblem(request, reply, code, mapped, `Invalid request: ${fastifyError.message}.`);
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendProblem(request, reply, 'internal', 500, 'An unexpected error occurred; it has been logged.');
}

/**
 * A value that fits neither side of a nullable field (`date-time | null`) fails three ways: the
 * real reason, "must be null" and "must match a schema in anyOf". Only the real reason is kept.
 */
function withoutUnionNoise(issues: ValidationIssue[]): ValidationIssue[] {
  const kept = issues.filter(
    (issue) =>
      issue.keyword !== 'anyOf' &&
      issue.keyword !== 'if' &&
      !(
        issue.keyword === 'type' &&
        issue.params.type === 'null' &&
        issues.some(
          (other) =>
            other !== issue && other.instancePath === issue.instancePath && other.keyword !== 'anyOf',
        )
      ),
  );
  return kept.length > 0 ? kept : issues;
}

function toFieldError(issue: ValidationIssue, context: string | undefined): FieldError {
  const prefix =
    context === 'body' || context === undefined ? '' : `/${context === 'querystring' ? 'query' : context}`;
  let pointer = prefix + issue.instancePath;
  let message = issue.message ?? 'is invalid';
  if (issue.keyword === 'required') {
    pointer += `/${escapePointer(String(issue.params.missingProperty))}`;
    message = 'is required';
  } else if (issue.keyword === 'additionalProperties') {
    pointer += `/${escapePointer(String(issue.params.additionalProperty))}`;
    message = 'is not a known field';
  } else if (issue.keyword === 'format' && issue.params.format === 'date-time') {
    message = DATE_TIME_RULE;
  } else if (issue.propertyName !== undefined) {
    pointer += `/${escapePointer(issue.propertyName)}`;
    message = 'key must be 1–128 characters, without NUL';
  } else if (issue.keyword === 'propertyNames') {
    pointer += `/${escapePointer(String(issue.params.propertyName))}`;
    message = 'key must be 1–128 characters, without NUL';
  }
  return { pointer, message };
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}
