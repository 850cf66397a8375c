// Runs an operation that answers 202 (ingest, a new version of a document) under the request's Idempotency-Key, if it sent one, and answers 202
// with the first response (marked `Idempotent-Replayed: true` when replayed).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fingerprintRequest, parseIdempotencyKey } from '../domain/idempotency.js';
import type { IdempotencyKeyRef } from '../domain/ports.js';
import type { AppDeps } from './deps.js';

export async function acceptIdempotently<T>(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  operation: string,
  fingerprintSource: unknown,
  /** Given the key (if the request sent one) for the write to store its response with. */
  execute: (key?: IdempotencyKeyRef) => Promise<T>,
  onReplay?: () => Promise<void>,
): Promise<FastifyReply> {
  const key = parseIdempotencyKey(request.headers['idempotency-key']);
  if (key === null) return reply.code(202).send(await execute());
  const { result, replayed } = await deps.idempotency.run(
    request.principal.org.id,
    key,
    fingerprintRequest(operation, fingerprintSource),
    execute,
  );
  if (replayed) {
    await onReplay?.();
    reply.header('idempotent-replayed', 'true');
  }
  return reply.code(202).send(result);
}

/** Validates the header before any work (e.g. before an upload is read). */
export function checkIdempotencyHeader(request: FastifyRequest): void {
  parseIdempotencyKey(request.headers['idempotency-key']);
}
