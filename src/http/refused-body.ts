// What is left of a refused request's body is read and dropped before the refusal is sent (a
// lingering close, as web servers do). A server that answers 413 and closes while the client is
// still sending makes the client's kernel reset the connection, and a client that has not yet read
// the answer (Node's fetch on a busy machine) then reports ECONNRESET or EPIPE instead of the 413.
// Reading is bounded: a body declared or found larger than the bound, or one still arriving after
// the time bound, is not waited for; its answer goes at once, with the connection closed.
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How many times a route's own limit is read and dropped before the answer goes without it. */
export const REFUSED_BODY_READ_FACTOR = 8;
/** How long a refused body is read at most: as long as common web servers linger. */
export const REFUSED_BODY_READ_MS = 30_000;

export interface BodyLimits {
  maxJsonBodyBytes: number;
  maxUploadBytes: number;
}

/** Bytes of a refused request's body read before answering: a multiple of the limit it was over. */
export function refusedBodyBound(request: IncomingMessage, limits: BodyLimits): number {
  const type = String(request.headers['content-type'] ?? '').toLowerCase();
  const limit = type.startsWith('multipart/') ? limits.maxUploadBytes : limits.maxJsonBodyBytes;
  return REFUSED_BODY_READ_FACTOR * limit;
}

/**
 * Reads and drops the rest of `request`'s body: true once it has all arrived, false when it is
 * larger than `maxBytes` (declared or read) or still arriving after `maxMs`.
 */
export function drainBody(request: IncomingMessage, maxBytes: number, maxMs: number): Promise<boolean> {
  if (request.complete || request.readableEnded) return Promise.resolve(true);
  if (request.destroyed) return Promise.resolve(false);
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(false);
  return new Promise((resolve) => {
    let read = 0;
    const finish = (drained: boolean) => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('close', onClose);
      request.off('error', onClose);
      resolve(drained);
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > maxBytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(request.complete);
    const timer = setTimeout(() => finish(false), maxMs);
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('close', onClose);
    request.once('error', onClose);
    // Whatever was reading it (a form parser) has given up: the bytes go nowhere now.
    request.unpipe();
    request.resume();
  });
}

/**
 * Wraps the error handler: before a refusal of a request whose body has not all arrived, that
 * body is read within its bounds; when it could not be, the answer closes the connection.
 */
export function answerAfterBody<E>(
  limits: BodyLimits,
  handler: (error: E, request: FastifyRequest, reply: FastifyReply) => FastifyReply,
): (error: E, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (error, request, reply) => {
    if (!request.raw.complete && !request.raw.readableEnded) {
      const drained = await drainBody(
        request.raw,
        refusedBodyBound(request.raw, limits),
        REFUSED_BODY_READ_MS,
      );
      if (!drained) reply.header('connection', 'close');
    }
    return handler(error, request, reply);
  };
}
