// Evaluations and sources work on the whole org: an evaluation ranks every partition's documents
// and the lists show every evaluation and source of the org, and a source writes into whichever
// partition it names. A key limited to partitions could see or write outside them, so it is refused.
import type { FastifyRequest } from 'fastify';
import { ERRORS } from '../domain/errors.js';

export function checkSeesEveryPartition(request: FastifyRequest, what: 'evaluations' | 'sources'): void {
  if (request.principal.access.partitions !== null) throw ERRORS.needsEveryPartition(what);
}
