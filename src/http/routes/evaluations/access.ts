// Evaluations rank the org's documents whatever their partition and list every evaluation of the
// org: a key limited to partitions could learn of documents outside them, so it is refused.
import type { FastifyRequest } from 'fastify';
import { ERRORS } from '../../../domain/errors.js';

export function checkSeesEveryPartition(request: FastifyRequest): void {
  if (request.principal.access.partitions !== null) throw ERRORS.evaluationsNeedEveryPartition();
}
