// Reading a multipart upload form: one `file` part streamed to the blob store (through
// IngestionService.withStagedFile, which checks its size and format, and discards it unless a
// commit keeps it) and a few small text parts, which may come before or after the file.
// POST /v1/ingest/file and PUT /v1/documents/{id}/content use it.
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import type { FastifyRequest } from 'fastify';
import { type ChunkSettings, checkChunkSettings, chunkSettingsOf } from '../../../domain/chunk-settings.js';
import { ApiError, ERRORS } from '../../../domain/errors.js';
import { checkLanguage } from '../../../domain/languages.js';
import { checkPartitionName } from '../../../domain/partitions.js';
import { checkPrincipals } from '../../../domain/principals.js';
import type { StagedUpload } from '../../../domain/staged-upload.js';
import { displayFilename } from '../../../domain/text.js';
import { MAX_EXTERNAL_ID_LENGTH, type Metadata as MetadataRecord } from '../../../domain/types.js';
import { ChunkOverlap, ChunkSize, Metadata } from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';

const validateMetadata = new Ajv({ allErrors: false, strict: false }).compile(Metadata);

type Part = MultipartFile | MultipartValue;

/** A text part's cap: far above what valid metadata can take (64 keys of 128 + 2 KB). */
export const MAX_METADATA_PART_BYTES = 256 * 1024;

/**
 * Reads the form: `file` is staged, each of `fields` may come once as a text part, anything else
 * is a 400. `finish` sees the text parts once every part is read (before the upload is checked),
 * and gives the staged file its metadata; what it throws refuses the request. `use` gets the
 * staged upload to commit; unless it does, the upload is removed before this returns or throws.
 */
export async function readUploadForm<T>(
  request: FastifyRequest,
  deps: AppDeps,
  fields: readonly string[],
  finish: (values: Record<string, string | null>) => MetadataRecord,
  use: (staged: StagedUpload) => Promise<T>,
): Promise<T> {
  if (!request.isMultipart()) {
    throw ERRORS.unsupportedMediaType('Send the file as multipart/form-data with a `file` part.');
  }
  const malformed = new MalformedBody();
  const parts = malformed.guard(request.parts()[Symbol.asyncIterator]());
  const values: Record<string, string | null> = Object.fromEntries(fields.map((f) => [f, null]));
  let file: MultipartFile | null = null;
  const expected = ['file', ...fields].map((f) => `\`${f}\``).join(', ');

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
    if (!fields.includes(part.fieldname)) {
      throw ERRORS.invalid(`Unknown form part ${JSON.stringify(part.fieldname)}; expected ${expected}.`);
    }
    if (values[part.fieldname] !== null) throw ERRORS.invalid(`Send at most one \`${part.fieldname}\` part.`);
    if (part.valueTruncated) {
      throw ERRORS.payloadTooLarge(
        `The \`${part.fieldname}\` part is larger than ${MAX_METADATA_PART_BYTES.toLocaleString('en-US')} bytes.`,
      );
    }
    values[part.fieldname] = typeof part.value === 'string' ? part.value : String(part.value);
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

  return malformed.translate(
    deps.ingestion.withStagedFile(
      { stream: malformed.watch(file.file), filename: displayFilename(file.filename) },
      async () => {
        for (let next = await parts.next(); !next.done; next = await parts.next())
          takeField(next.value as Part);
        return finish(values);
      },
      use,
      request.traceSpan,
    ),
  );
}

/**
 * The `access` form part: a JSON array of principals (the JSON forms' `access`), refused with
 * their pointer; null when absent.
 */
export function parseAccessPart(raw: string | null): string[] | null {
  if (raw === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed)) {
    throw ERRORS.invalid(
      'access must be a JSON array of principals encoded as a string, e.g. ["group:eng"].',
      [{ pointer: '/access', message: 'must be a JSON array of strings' }],
    );
  }
  return checkPrincipals(parsed, '/access', 1);
}

/** The `partition` form part: a partition name, refused with the JSON forms' pointer and message. */
export function parsePartitionPart(raw: string | null): string | null {
  return raw === null ? null : checkPartitionName(raw, '/partition');
}

/** The `language` form part: an ISO 639-1 code; null when absent. */
export function parseLanguagePart(raw: string | null): string | null {
  if (raw === null) return null;
  checkLanguage(raw, '/language');
  return raw;
}

const validateChunkParts = new Ajv({ allErrors: false, strict: false }).compile(
  Type.Object({ chunk_size: Type.Optional(ChunkSize()), chunk_overlap: Type.Optional(ChunkOverlap()) }),
);

/**
 * The `chunk_size` and `chunk_overlap` form parts: whole numbers within the bounds of the JSON
 * forms, refused with the same problem (pointer and message) as a JSON body's; each absent one
 * at its default.
 */
export function parseChunkParts(raw: {
  chunk_size?: string | null;
  chunk_overlap?: string | null;
}): ChunkSettings {
  const numbers: Record<string, number | string> = {};
  for (const name of ['chunk_size', 'chunk_overlap'] as const) {
    const value = raw[name];
    if (value === null || value === undefined) continue;
    // A part is text: digits are its number; anything else is left for the schema to refuse.
    numbers[name] = /^-?\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : value;
  }
  if (!validateChunkParts(numbers)) {
    const issue = validateChunkParts.errors?.[0];
    const pointer = issue?.instancePath ?? '';
    const message = issue?.message ?? 'is invalid';
    throw ERRORS.invalid(`Invalid request: ${pointer} ${message}.`, [{ pointer, message }]);
  }
  const chunks = chunkSettingsOf({
    chunkSize: numbers.chunk_size as number | undefined,
    chunkOverlap: numbers.chunk_overlap as number | undefined,
  });
  checkChunkSettings(chunks);
  return chunks;
}

/** The `external_id` form part: 1 to 255 characters; null when absent. */
export function parseExternalIdPart(raw: string | null): string | null {
  if (raw === null) return null;
  if (raw.length === 0 || raw.length > MAX_EXTERNAL_ID_LENGTH) {
    const message = `must be 1 to ${MAX_EXTERNAL_ID_LENGTH} characters, got ${raw.length}`;
    throw ERRORS.invalid(`The \`external_id\` part ${message}.`, [{ pointer: '/external_id', message }]);
  }
  return raw;
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

export function parseMetadata(raw: string | null): MetadataRecord {
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
