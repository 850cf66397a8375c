// Runs an operation that answers 202 (ingest, a new version of a document) under the request's Idempotency-Key, if it sent one, and answers 202
// with the first response (marked `Idempotent-Replayed: true` when replayed).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fingerprintRequest, parseIdempotencyKey } from '../domain/idempotency.js';
import type { IdempotencyKeyRef } from '../domain/ports.js';
import type { AppDeps } from './deps.js';

/** What an operation run under the key gave: its result, or the first request's when replayed. */
export interface Accepted<T> {
  result: T;
  replayed: boolean;
}

export async function acceptIdempotently<T>(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  operation: string,
  fingerprintSource: unknown,
  /** Given the key (if the request sent one) for the write to store its response with. */
  execute: (key?: IdempotencyKeyRef) => Promise<T>,
): Promise<FastifyReply> {
  return sendAccepted(reply, await runIdempotently(deps, request, operation, fingerprintSource, execute));
}

/**
 * acceptIdempotently without the answer: for a route that must finish something before it answers
 * (an upload's staged file is discarded before the 202 goes out).
 */
export async function runIdempotently<T>(
  deps: AppDeps,
  request: FastifyRequest,
  operation: string,
  fingerprintSource: unknown,
  execute: (key?: IdempotencyKeyRef) => Promise<T>,
): Promise<Accepted<T>> {
  const key = parseIdempotencyKey(request.headers['idempotency-key']);
  if (key === null) return { result: await execute(), replayed: false };
  return deps.idempotency.run(
    request.principal.org.id,
    key,
    fingerprintRequest(operation, fingerprintSource),
    execute,
  );
}

/** The 202 of runIdempotently's outcome. */
export function sendAccepted<T>(reply: FastifyReply, { result, replayed }: Accepted<T>): FastifyReply {
  if (replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(202).send(result);
}

/** Validates the header before any work (e.g. before an upload is read). */
export function checkIdempotencyHeader(request: FastifyRequest): void {
  parseIdempotencyKey(request.headers['idempotency-key']);
}
