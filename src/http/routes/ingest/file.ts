// POST /v1/ingest/file — one uploaded file (multipart), streamed to the blob store.
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { ApiError, ERRORS } from '../../../domain/errors.js';
import { listInProse, SUPPORTED_FORMATS } from '../../../domain/formats.js';
import { displayFilename } from '../../../domain/text.js';
import type { Metadata as MetadataRecord } from '../../../domain/types.js';
import type { AppDeps } from '../../deps.js';
import { acceptIdempotently, checkIdempotencyHeader } from '../../idempotent.js';
import { documentOnly, idempotentIngest } from '../../openapi.js';
import { COMMON_ERRORS, INGEST_ERRORS, IngestAck, Metadata, problemResponses } from '../../schemas.js';

const validateMetadata = new Ajv({ allErrors: false, strict: false }).compile(Metadata);

type Part = MultipartFile | MultipartValue;

/** ".pdf, .docx, .txt, .md or .html/.htm": each format's extensions, from the registry. */
const FILE_EXTENSIONS = listInProse(SUPPORTED_FORMATS.map((format) => format.extensions.join('/')));

/** The `metadata` part's cap: far above what valid metadata can take (64 keys of 128 + 2 KB). */
export const MAX_METADATA_PART_BYTES = 256 * 1024;

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
  },
  {
    additionalProperties: false,
    examples: [{ file: '(the bytes of employee-handbook.pdf)', metadata: '{"source":"hr","year":"2026"}' }],
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
        description: `multipart/form-data with one \`file\` part (${FILE_EXTENSIONS}, at most 100 MB) and an optional \`metadata\` part: a JSON object of string values, encoded as a string. The format is decided from the bytes and must agree with the extension.`,
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
      if (!request.isMultipart()) {
        throw ERRORS.unsupportedMediaType('Send the file as multipart/form-data with a `file` part.');
      }
      const malformed = new MalformedBody();
      const parts = malformed.guard(request.parts()[Symbol.asyncIterator]());
      let metadataRaw: string | null = null;
      let file: MultipartFile | null = null;

      const takeField = (part: Part) => {
        if (part.type === 'file') {
          part.file.resume();
          throw ERRORS.invalid(
            part.fieldname === 'file'
              ? 'Send exactly one `file` part.'
              : `Unexpected file part ${JSON.stringify(part.fieldname)}.`,
          );
        }
        if (part.fieldname === 'file') {
          throw ERRORS.invalid(
            'The `file` part has no filename: send it as a file (Content-Disposition: form-data; name="file"; filename="…").',
          );
        }
        if (part.fieldname !== 'metadata') {
          throw ERRORS.invalid(
            `Unknown form part ${JSON.stringify(part.fieldname)}; expected \`file\` and \`metadata\`.`,
          );
        }
        if (metadataRaw !== null) throw ERRORS.invalid('Send at most one `metadata` part.');
        if (part.valueTruncated) {
          throw ERRORS.payloadTooLarge(
            `The \`metadata\` part is larger than ${MAX_METADATA_PART_BYTES.toLocaleString('en-US')} bytes.`,
          );
        }
        metadataRaw = typeof part.value === 'string' ? part.value : String(part.value);
      };

      for (let next = await parts.next(); !next.done; next = await parts.next()) {
        const part = next.value as Part;
        if (part.type === 'file' && part.fieldname === 'file') {
          file = part;
          break;
        }
        takeField(part);
      }
      if (!file) throw ERRORS.invalid('The form has no `file` part.');

      const staged = await malformed.translate(
        deps.ingestion.stageFile(
          { stream: malformed.watch(file.file), filename: displayFilename(file.filename) },
          async () => {
            for (let next = await parts.next(); !next.done; next = await parts.next())
              takeField(next.value as Part);
            return parseMetadata(metadataRaw);
          },
        ),
      );
      const orgId = request.principal.org.id;
      let committed = false;
      try {
        return await acceptIdempotently(
          deps,
          request,
          reply,
          'ingest/file',
          { sha256: staged.blob.sha256, filename: staged.filename, metadata: staged.metadata },
          async () => {
            const ack = await deps.ingestion.commitFile(orgId, staged);
            committed = true;
            return ack;
          },
          () => deps.ingestion.discardFile(staged),
        );
      } catch (error) {
        // A refused key (409/422) leaves the staged upload unused; a committed one is the document's.
        if (!committed) await deps.ingestion.discardFile(staged);
        throw error;
      }
    },
  );
}

/**
 * busboy reports a malformed body (no boundary, a broken part header, a form cut off before its
 * closing boundary) with plain errors, through the parts iterator or through the file stream the
 * blob store is reading. Those are the client's mistakes: every error that came from the body's
 * parser becomes a 400 rather than a 500, whichever way it surfaced. Errors are recognised by
 * identity (the parser's own error objects), never by their message.
 */
class MalformedBody {
  private readonly streams: NodeJS.ReadableStream[] = [];

  guard(parts: AsyncIterator<unknown>): AsyncIterator<unknown> {
    return {
      next: async () => {
        try {
          return await parts.next();
        } catch (error) {
          throw this.asInvalid(error);
        }
      },
    };
  }

  /**
   * A part's stream, remembered: when the body is cut off, the parser destroys it with its error,
   * possibly before anyone listens (a small body is parsed at once), so `errored` is what tells.
   */
  watch<T extends NodeJS.ReadableStream>(stream: T): T {
    this.streams.push(stream);
    return stream;
  }

  async translate<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      const fromParser = this.streams.some((s) => (s as { errored?: unknown }).errored === error);
      throw fromParser ? this.asInvalid(error) : error;
    }
  }

  private asInvalid(error: unknown): unknown {
    const status = (error as { statusCode?: unknown }).statusCode;
    if (error instanceof Error && !(error instanceof ApiError) && typeof status !== 'number') {
      return ERRORS.invalid(`Invalid multipart body: ${error.message}.`);
    }
    return error;
  }
}

function parseMetadata(raw: string | null): MetadataRecord {
  if (raw === null) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw ERRORS.invalid('The `metadata` part is not valid JSON.', [
      { pointer: '/metadata', message: 'is not valid JSON' },
    ]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !validateMetadata(value)) {
    const issue = validateMetadata.errors?.[0];
    const message = issue
      ? `${issue.instancePath || ''} ${issue.message ?? 'is invalid'}`.trim()
      : 'must be a JSON object';
    throw ERRORS.invalid(`The \`metadata\` part is invalid: ${message}.`, [
      { pointer: '/metadata', message },
    ]);
  }
  return value as MetadataRecord;
}
