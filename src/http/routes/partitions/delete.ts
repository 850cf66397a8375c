// DELETE /v1/partitions/{name} — marks a partition for deletion; its documents go in the background.
import type { FastifyInstance } from 'fastify';
import { COMMON_ERRORS, PartitionDeleteAck, PartitionParams, problemResponses } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

export function deletePartitionRoute(app: FastifyInstance, deps: AppDeps): void {
  app.delete<{ Params: { name: string } }>(
    '/partitions/:name',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'deletePartition',
        summary: 'Delete a partition',
        description:
          'Deletes every document of the partition, each as DELETE /v1/documents/{id} does, in the background: answers 202 at once, GET /v1/partitions shows it as `deleting` until it is empty. Ingest into it meanwhile is a 409 `partition_deleting`. A partition without documents, or one the key may not see, is a 404.',
        tags: ['partitions'],
        params: PartitionParams,
        response: { 202: PartitionDeleteAck, ...problemResponses(...COMMON_ERRORS, 'not_found') },
      },
    },
    async (request, reply) => {
      const { principal } = request;
      await deps.partitions.delete(principal.org.id, request.access, request.params.name);
      return reply.code(202).send({ status: 'accepted', partition: request.params.name });
    },
  );
}
