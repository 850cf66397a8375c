// The input and output schemas several tools share. Inputs carry the bounds of the /v1 API, so a
// call the API would refuse is refused here with the same rule, and descriptions a model can act
// on; document records are open objects, so fields the API adds later pass through.
import { z } from 'zod';
import type { DocumentStatus } from '../../client/types.js';
import { FILTER_MAX_CONDITIONS, FILTER_MAX_DEPTH } from '../../domain/filter.js';
import { MAX_PARTITIONS_PER_REQUEST, PARTITION_PATTERN } from '../../domain/partitions.js';
import { ACCESS_MAX_PRINCIPALS, PRINCIPAL_MAX_LENGTH } from '../../domain/principals.js';
import { DOCUMENT_STATUSES } from '../../domain/types.js';

const FILTER_DESCRIPTION = [
  'Metadata filter (metadata values are strings). Forms:',
  '{"key": "v"} equals; {"key": ["a", "b"]} any of;',
  '{"key": {"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": "v"}}; {"key": {"$in"|"$nin": ["a", "b"]}};',
  '{"key": {"$exists": true|false}}; {"$and": [f, …]}, {"$or": [f, …]}, {"$not": f}.',
  'Several entries in one object must all hold. Comparisons are by Unicode code point, so ISO-8601',
  'dates order correctly: {"date": {"$gte": "2024-01-01"}}. A comparison on a missing key is false.',
  `At most ${FILTER_MAX_DEPTH} levels of nesting and ${FILTER_MAX_CONDITIONS} conditions.`,
  'Example: {"lang": "en", "$or": [{"team": "search"}, {"year": {"$gte": "2023"}}]}.',
].join(' ');

export const filterSchema = z.record(z.string(), z.unknown()).describe(FILTER_DESCRIPTION);

export const documentId = z.uuid().describe('A document ID (UUID), as returned by the ingest tools.');

export const partitionsInput = (what: string) =>
  z
    .array(z.string().regex(new RegExp(PARTITION_PATTERN)))
    .min(1)
    .max(MAX_PARTITIONS_PER_REQUEST)
    .optional()
    .describe(
      `${what} only documents of these partitions (default: every partition the API key may see; one the key is not limited to is an error).`,
    );

export const principalsInput = z
  .array(z.string().min(1).max(PRINCIPAL_MAX_LENGTH))
  .max(ACCESS_MAX_PRINCIPALS)
  .optional()
  .describe(
    'Act for these principals (e.g. "group:eng", "user:42"): only documents without an access list or whose list names one of them are seen. Default: the API key’s principals, if it is bound to some; a principal the key is not bound to is an error.',
  );

export const documentRecordOutput = z.looseObject({
  id: z.string(),
  status: z.enum(DOCUMENT_STATUSES as [DocumentStatus, ...DocumentStatus[]]),
  metadata: z.record(z.string(), z.string()),
  chunk_count: z.number().int().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
