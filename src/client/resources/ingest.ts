// How DocindexClient's ingest requests are built: the JSON bodies and multipart forms of the
// ingest endpoints and of a document's new content or reprocessing, each with an Idempotency-Key
// (a fresh one per call unless given, the same on that call's retries). A file is a path (Node
// only; streamed from disk, not read into memory) or a Blob/File, labelled with the media type of
// its extension from the format registry: pure data (no parser, no Node API), so the client stays
// light and browser-safe while naming the same extensions and media types as the server.
import { SUPPORTED_FORMATS } from '../../domain/formats.js';
import type { CallOptions } from '../http-exchange.js';
import type {
  ChunkOptions,
  IngestFileOptions,
  IngestOptions,
  IngestTextOptions,
  IngestUrlOptions,
  NewContent,
  ReprocessOptions,
} from '../options.js';
import type { Metadata, TextDocument } from '../types.js';

/** Extension → the media type an upload is labelled with: `.pdf` → `application/pdf`, …, `.htm`. */
const FILE_TYPES: Record<string, string> = Object.fromEntries(
  SUPPORTED_FORMATS.flatMap((format) =>
    format.extensions.map((extension) => [extension, format.mediaTypes[0]]),
  ),
);

/** `POST /v1/ingest`: the documents, each given the call's access list unless it has its own. */
export function ingestTextCall(
  documents: Array<string | TextDocument>,
  options: IngestTextOptions,
): CallOptions {
  const body = {
    documents: documents.map((doc) => {
      const given = typeof doc === 'string' ? { text: doc } : doc;
      return options.access === undefined || given.access !== undefined
        ? given
        : { ...given, access: options.access };
    }),
    ...(options.partition === undefined ? {} : { partition: options.partition }),
    ...chunkFields(options),
  };
  return {
    json: body,
    idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    signal: options.signal,
  };
}

/** `POST /v1/ingest/file`: the file and the small fields as a form, built again for each attempt. */
export async function ingestFileCall(file: string | Blob, options: IngestFileOptions): Promise<CallOptions> {
  const { blob, filename } = await fileBlob(file, options.filename);
  const { metadata, externalId, partition, access, chunkSize, chunkOverlap } = options;
  return {
    form: () => {
      const form = new FormData();
      if (metadata !== undefined) form.append('metadata', JSON.stringify(metadata));
      if (externalId !== undefined) form.append('external_id', externalId);
      if (partition !== undefined) form.append('partition', partition);
      if (access !== undefined) form.append('access', JSON.stringify(access));
      if (chunkSize !== undefined) form.append('chunk_size', String(chunkSize));
      if (chunkOverlap !== undefined) form.append('chunk_overlap', String(chunkOverlap));
      form.append('file', blob, filename);
      return form;
    },
    idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    signal: options.signal,
  };
}

/** `POST /v1/ingest/url`. */
export function ingestUrlCall(
  url: string,
  metadata: Metadata | undefined,
  options: IngestUrlOptions,
): CallOptions {
  return {
    json: {
      url,
      ...(metadata === undefined ? {} : { metadata }),
      ...(options.externalId === undefined ? {} : { external_id: options.externalId }),
      ...(options.partition === undefined ? {} : { partition: options.partition }),
      ...(options.access === undefined ? {} : { access: options.access }),
      ...chunkFields(options),
    },
    idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    signal: options.signal,
  };
}

/**
 * `PUT /v1/documents/{id}/content`: a file as a form, text or a URL as JSON, with the access list
 * when given.
 */
export async function replaceContentCall(
  content: NewContent,
  options: IngestOptions & { access?: string[] | null },
): Promise<CallOptions> {
  const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
  if ('file' in content) {
    const { blob, filename } = await fileBlob(content.file, content.filename);
    return {
      form: () => {
        const form = new FormData();
        form.append('file', blob, filename);
        if (options.access != null) form.append('access', JSON.stringify(options.access));
        return form;
      },
      idempotencyKey,
      principals: options.principals,
      signal: options.signal,
    };
  }
  const json = options.access === undefined ? content : { ...content, access: options.access };
  return { json, idempotencyKey, principals: options.principals, signal: options.signal };
}

/** `POST /v1/documents/{id}/reprocess`: the chunk settings given. */
export function reprocessCall(options: ReprocessOptions): CallOptions {
  return {
    json: chunkFields(options),
    idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    principals: options.principals,
    signal: options.signal,
  };
}

/** The chunk settings given, as the JSON bodies name them. */
function chunkFields(options: ChunkOptions): { chunk_size?: number; chunk_overlap?: number } {
  return {
    ...(options.chunkSize === undefined ? {} : { chunk_size: options.chunkSize }),
    ...(options.chunkOverlap === undefined ? {} : { chunk_overlap: options.chunkOverlap }),
  };
}

function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot).toLowerCase();
}

/** A file to upload as a Blob with a name: a path (Node only; streamed from disk) or a Blob/File. */
async function fileBlob(
  file: string | Blob,
  name: string | undefined,
): Promise<{ blob: Blob; filename: string }> {
  if (typeof file === 'string') {
    const { openAsBlob } = await import('node:fs');
    const base = file.split(/[\\/]/).pop() ?? file;
    const blob = await openAsBlob(file, {
      type: FILE_TYPES[extensionOf(base)] ?? 'application/octet-stream',
    });
    return { blob, filename: name ?? base };
  }
  // A bare Blob has no name; an extension from its type helps the server agree on the format.
  const filename =
    name ??
    ('name' in file && typeof file.name === 'string'
      ? file.name
      : `upload${Object.entries(FILE_TYPES).find(([, type]) => file.type.startsWith(type))?.[0] ?? ''}`);
  return { blob: file, filename };
}
