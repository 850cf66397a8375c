// POST /v1/ingest/file — one uploaded file (multipart), streamed to the blob store.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_CHUNKS } from '../../../domain/chunk-settings.js';
import { listInProse, SUPPORTED_FORMATS } from '../../../domain/formats.js';
import { MAX_EXTERNAL_ID_LENGTH } from '../../../domain/types.js';
import {
  CHUNK_OVERLAP_WITH_DEFAULT,
  CHUNK_SIZE_WITH_DEFAULT,
  ChunkOverlap,
  ChunkSize,
  COMMON_ERRORS,
  INGEST_ERRORS,
  IngestAck,
  LanguageCode,
  PartitionName,
  problemResponses,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import { checkIdempotencyHeader, runIdempotently, sendAccepted } from '../../idempotent.js';
import { documentOnly, idempotentIngest } from '../../openapi.js';
import {
  MAX_METADATA_PART_BYTES,
  parseAccessPart,
  parseChunkParts,
  parseExternalIdPart,
  parseLanguagePart,
  parseMetadata,
  parsePartitionPart,
  readUploadForm,
} from './upload-form.js';

export { MAX_METADATA_PART_BYTES };

/** ".pdf, .docx, .txt, .md or .html/.htm": each format's extensions, from the registry. */
export const FILE_EXTENSIONS = listInProse(SUPPORTED_FORMATS.map((format) => format.extensions.join('/')));

/** The form as the OpenAPI document shows it; the route reads and checks the parts itself. */
const IngestFileForm = Type.Object(
  {
    file: Type.String({
      format: 'binary',
      description: `The file (${FILE_EXTENSIONS}, at most 100 MB), with its filename.`,
    }),
    metadata: Type.Optional(
      Type.String({
        maxLength: MAX_METADATA_PART_BYTES,
        description: 'A JSON object of string values, encoded as a string.',
      }),
    ),
    external_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_EXTERNAL_ID_LENGTH,
        description:
          'Your own key for the document, unique in your organisation: when a document already has it, this file becomes that document’s new version (the ack names it).',
      }),
    ),
    language: Type.Optional(LanguageCode),
    partition: Type.Optional(PartitionName),
    access: Type.Optional(
      Type.String({
        description:
          'The document’s access list as a JSON array of principals encoded as a string, e.g. `["group:eng","user:42"]` (1 to 64 principals of 1 to 128 characters). Absent: none.',
      }),
    ),
    chunk_size: Type.Optional(ChunkSize({ description: CHUNK_SIZE_WITH_DEFAULT })),
    chunk_overlap: Type.Optional(ChunkOverlap({ description: CHUNK_OVERLAP_WITH_DEFAULT })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        file: '(the bytes of employee-handbook.pdf)',
        metadata: '{"source":"hr","year":"2026"}',
        chunk_size: 256,
        chunk_overlap: 32,
      },
    ],
  },
);

export function ingestFileRoute(app: FastifyInstance, deps: AppDeps): void {
  app.post(
    '/ingest/file',
    {
      config: {
        scope: 'ingest',
        swaggerTransform: documentOnly({
          ...idempotentIngest,
          body: IngestFileForm,
          consumes: ['multipart/form-data'],
        }),
      },
      schema: {
        operationId: 'ingestFile',
        summary: 'Ingest an uploaded file',
        description: `multipart/form-data with one \`file\` part (${FILE_EXTENSIONS}, at most 100 MB), an optional \`metadata\` part (a JSON object of string values, encoded as a string), an optional \`external_id\` part (re-sending an external_id makes a new version of that document), an optional \`language\` part (ISO 639-1; detected when absent), an optional \`partition\` part (the document's partition, default \`default\`), an optional \`access\` part (the document's access list: a JSON array of principals encoded as a string, e.g. \`["group:eng"]\`; absent: none), and optional \`chunk_size\` and \`chunk_overlap\` parts (whole numbers, as on POST /v1/ingest). The format is decided from the bytes and must agree with the extension.`,
        tags: ['ingest'],
        consumes: ['multipart/form-data'],
        response: {
          202: IngestAck,
          ...problemResponses(...COMMON_ERRORS, ...INGEST_ERRORS),
        },
      },
    },
    async (request, reply) => {
      checkIdempotencyHeader(request);
      let externalId: string | null = null;
      let language: string | null = null;
      let partition: string | null = null;
      let accessList: string[] | null = null;
      let chunks = DEFAULT_CHUNKS;
      let chunkParts: Record<string, number> = {};
      const orgId = request.principal.org.id;
      const accepted = await readUploadForm(
        request,
        deps,
        ['metadata', 'external_id', 'language', 'partition', 'access', 'chunk_size', 'chunk_overlap'],
        (fields) => {
          externalId = parseExternalIdPart(fields.external_id ?? null);
          language = parseLanguagePart(fields.language ?? null);
          partition = parsePartitionPart(fields.partition ?? null);
          accessList = parseAccessPart(fields.access ?? null);
          chunks = parseChunkParts(fields);
          // The settings sent, for the idempotency fingerprint (a default is not a setting sent).
          chunkParts = {
            ...(fields.chunk_size == null ? {} : { chunk_size: chunks.chunkSize }),
            ...(fields.chunk_overlap == null ? {} : { chunk_overlap: chunks.chunkOverlap }),
          };
          return parseMetadata(fields.metadata ?? null);
        },
        // Unless the commit keeps it (a refused key, a replay, a failure), the upload is removed.
        (staged) =>
          runIdempotently(
            deps,
            request,
            'ingest/file',
            {
              sha256: staged.blob.sha256,
              filename: staged.filename,
              metadata: staged.metadata,
              ...(externalId === null ? {} : { external_id: externalId }),
              ...(language === null ? {} : { language }),
              ...(partition === null ? {} : { partition }),
              ...(accessList === null ? {} : { access: accessList }),
              ...chunkParts,
            },
            (key) =>
              deps.ingestion.commitFile(
                orgId,
                request.access,
                staged,
                { externalId, language, partition, access: accessList, chunks },
                key,
                request.traceSpan,
              ),
          ),
      );
      return sendAccepted(reply, accepted);
    },
  );
}
