// GET /v1/partitions — the partitions of the org the key may see, with their sizes.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, PartitionList, problemResponses } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function listPartitionsRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get(
    '/partitions',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listPartitions',
        summary: 'List partitions',
        description:
          'Each partition that holds documents (or is being deleted), with its documents, chunks and bytes. A key limited to partitions sees only its own.',
        tags: ['partitions'],
        response: { 200: PartitionList, ...problemResponses(...COMMON_ERRORS) },
      },
    },
    async (request) => {
      const { principal } = request;
      return { partitions: await deps.partitions.list(principal.org.id, request.access) };
    },
  );
}
