// GET /v1/documents — cursor-paged list, status and metadata filters, and batch status by ids.
import type { FastifyInstance } from 'fastify';
import { ERRORS } from '../../../domain/errors.js';
import { COMMON_ERRORS, DocumentList, ListDocumentsQuery, problemResponses } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { documentsJson } from './json.js';

const MAX_IDS = 100;

export function listDocumentsRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Querystring: ListDocumentsQuery }>(
    '/documents',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listDocuments',
        summary: 'List documents',
        description:
          'Newest first. `ids=a,b,c` returns the status of up to 100 documents in one request; unknown ids are absent. `external_id` finds the document you gave that key. `filter` (URL-encoded JSON, the language of POST /v1/query) keeps the documents whose metadata passes it; `partitions=a,b` keeps those of these partitions (default: every partition the key may see); every parameter given must hold.',
        tags: ['documents'],
        querystring: ListDocumentsQuery,
        response: {
          200: DocumentList,
          ...problemResponses(...COMMON_ERRORS, 'principal_forbidden', 'partition_forbidden'),
        },
      },
    },
    async (request) => {
      const { limit, cursor, status, ids, content_sha256, external_id, filter, partitions } = request.query;
      const idList = ids === undefined ? null : parseIds(ids);
      const page = await deps.documents.list(request.principal.org.id, request.access, {
        limit,
        cursor: cursor ?? null,
        status: status ?? null,
        ids: idList,
        contentSha256: content_sha256 ?? null,
        externalId: external_id ?? null,
        filter: filter ?? null,
        partitions: partitions === undefined ? null : parsePartitions(partitions),
      });
      return { documents: await documentsJson(deps, page.documents), next_cursor: page.nextCursor };
    },
  );
}

/** `partitions=a,b`: the names, checked by the service (pointer /query/partitions). */
function parsePartitions(raw: string): string[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (names.length === 0) {
    throw ERRORS.invalid('partitions must list at least one partition name.', [
      { pointer: '/query/partitions', message: 'must list at least one name' },
    ]);
  }
  return names;
}

function parseIds(raw: string): string[] {
  const ids = [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
  ];
  if (ids.length === 0 || ids.length > MAX_IDS) {
    throw ERRORS.invalid(`ids must list between 1 and ${MAX_IDS} document ids.`, [
      { pointer: '/query/ids', message: `must list 1 to ${MAX_IDS} ids, got ${ids.length}` },
    ]);
  }
  return ids;
}
