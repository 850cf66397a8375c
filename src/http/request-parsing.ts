// How raw requests become bodies, and how faults found before any route runs are answered: the
// JSON parser (UTF-8 only, no prototype keys, an empty body on a method without one is no body),
// Content-Encoding, query-string integers, and the router's and Node's own parse errors. Every
// refusal here is a problem+json 4xx, like the routes' own.
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { ApiError, ERRORS, titleOf } from '../domain/errors.js';
import { sendProblem } from './problem.js';

/** Methods whose requests carry no body: a JSON Content-Type on them with no bytes is ignored. */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/**
 * Replaces Fastify's JSON parser. RFC 8259 JSON is UTF-8, so another declared charset is refused
 * rather than decoded as UTF-8 (which would silently turn "café" into "caf\uFFFD"). Keys that could
 * poison prototypes are refused with a message that says so, not as "invalid JSON".
 */
export function registerJsonParser(app: FastifyInstance, bodyLimit: number): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit },
    (request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void) => {
      try {
        done(null, parseJsonBody(request, body));
      } catch (error) {
        done(error as Error);
      }
    },
  );
}

function parseJsonBody(request: FastifyRequest, body: Buffer): unknown {
  const charset = charsetOf(request.headers['content-type']);
  if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
    throw ERRORS.unsupportedMediaType(`JSON must be UTF-8; charset=${charset} is not accepted.`);
  }
  if (body.length === 0) {
    if (BODYLESS_METHODS.has(request.method)) return undefined;
    throw ERRORS.invalid('The request body is empty; send a JSON object.');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    throw ERRORS.invalid('The request body is not valid UTF-8.');
  }
  let forbidden: string | null = null;
  let value: unknown;
  try {
    value = JSON.parse(text, function (this: unknown, key: string, v: unknown) {
      if (forbidden === null && isPoisoningKey(key, v)) forbidden = key;
      return v;
    });
  } catch {
    throw ERRORS.invalid('The request body is not valid JSON.');
  }
  if (forbidden !== null) {
    throw ERRORS.invalid(
      `The key ${JSON.stringify(forbidden)} is not allowed anywhere in a request body (it could alter object prototypes).`,
    );
  }
  return value;
}

/** `__proto__` anywhere, and `constructor` holding a `prototype`: what secure JSON parsers refuse. */
export function isPoisoningKey(key: string, value: unknown): boolean {
  if (key === '__proto__') return true;
  return (
    key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')
  );
}

function charsetOf(contentType: string | undefined): string | null {
  if (!contentType) return null;
  for (const param of contentType.split(';').slice(1)) {
    const [name, raw] = param.split('=', 2);
    if (name?.trim().toLowerCase() !== 'charset' || raw === undefined) continue;
    return raw
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return null;
}

/**
 * Compressed bodies are refused before they are read: decoding them would need a second size cap
 * (a small gzip body can inflate a thousandfold), and clients that compress can also not.
 */
export function refuseContentEncoding(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const encoding = request.headers['content-encoding'];
    if (encoding === undefined) return;
    const codings = encoding
      .split(',')
      .map((c) => c.trim().toLowerCase())
      .filter((c) => c !== '' && c !== 'identity');
    if (codings.length > 0) {
      throw new ApiError(
        'unsupported_media_type',
        `Content-Encoding ${JSON.stringify(encoding)} is not accepted; send the body uncompressed.`,
      );
    }
  });
}

const PLAIN_INTEGER = /^-?(0|[1-9][0-9]*)$/;

interface QueryValidator {
  (data: unknown): boolean;
  errors?: FastifySchemaValidationError[] | null;
}

/**
 * Query-string numbers are parsed from their text, but only plain integers are: Ajv's coercion
 * would read `limit=1e2` as 100 and `limit=%20` as 0. Wraps a compiled querystring validator so
 * integer parameters that are not written as plain integers fail first.
 */
export function plainIntegerQuery(schema: unknown, validate: QueryValidator): QueryValidator {
  const integers = integerProperties(schema);
  if (integers.length === 0) return validate;
  const wrapped: QueryValidator = (data: unknown) => {
    if (typeof data === 'object' && data !== null) {
      for (const name of integers) {
        const value = (data as Record<string, unknown>)[name];
        if (typeof value === 'string' && !PLAIN_INTEGER.test(value)) {
          wrapped.errors = [
            {
              instancePath: `/${name}`,
              schemaPath: `#/properties/${name}/type`,
              keyword: 'type',
              params: { type: 'integer' },
              message: 'must be an integer',
            },
          ];
          return false;
        }
      }
    }
    const ok = validate(data);
    wrapped.errors = validate.errors ?? null;
    return ok;
  };
  return wrapped;
}

function integerProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | null)?.properties;
  if (!properties) return [];
  return Object.entries(properties)
    .filter(([, s]) => s.type === 'integer')
    .map(([name]) => name);
}

/** The router's own refusals (a malformed percent-encoding, an over-long path parameter). */
export function frameworkErrorHandler(
  error: Error & { code?: string },
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return sendProblem(request, reply, 'uri_too_long', 414, 'A path parameter is longer than the limit.');
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    return sendProblem(
      request,
      reply,
      'invalid_request',
      400,
      'The request path is not a valid URL (bad percent-encoding).',
    );
  }
  return sendProblem(request, reply, 'invalid_request', 400, `Invalid request: ${error.message}.`);
}

/** How long a connection refused by the HTTP parser stays open for its client to read the answer. */
const CLIENT_ERROR_LINGER_MS = 1_000;

/**
 * Faults Node's HTTP parser finds before Fastify sees a request (conflicting Content-Length and
 * Transfer-Encoding, headers too large, a malformed request line): answered as problem+json on the
 * raw socket, then the connection is closed, as the parser cannot find the next request's start.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const code = status === 431 ? 'headers_too_large' : status === 408 ? 'request_timeout' : 'invalid_request';
  const detail =
    status === 431
      ? 'The request headers are larger than the limit.'
      : status === 408
        ? 'The request took too long to arrive.'
        : 'The request could not be parsed as HTTP.';
  const body = JSON.stringify({
    type: `https://docindex.dev/problems/${code}`,
    title: titleOf(code),
    status,
    detail,
    code,
  });
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  socket.end(
    `HTTP/1.1 ${status} ${titleOf(code)}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  // A client that keeps sending (a slow-loris drip) never closes its side: give it a moment to
  // read the answer, then drop the connection.
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
}
