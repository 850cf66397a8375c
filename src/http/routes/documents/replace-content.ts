// PUT /v1/documents/{id}/content — new content for a document: JSON text, JSON URL or a multipart
// file. It becomes a new version; the current one answers queries until the new one is ready.
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { ERRORS } from '../../../domain/errors.js';
import type { NewContent } from '../../../domain/ingestion.js';
import {
  COMMON_ERRORS,
  DocumentParams,
  INGEST_ERRORS,
  PrincipalsQuery,
  problemResponses,
  ReplaceContentJson,
  VersionAck,
} from '../../../wire/index.js';
import type { AppDeps } from '../../deps.js';
import {
  acceptIdempotently,
  checkIdempotencyHeader,
  runIdempotently,
  sendAccepted,
} from '../../idempotent.js';
import { documentOnly, idempotentIngest } from '../../openapi.js';
import { FILE_EXTENSIONS } from '../ingest/file.js';
import { parseAccessPart, parseLanguagePart, readUploadForm } from '../ingest/upload-form.js';

const validateJson = new Ajv({ allErrors: false, strict: false }).compile(ReplaceContentJson);

/** The body as the OpenAPI document shows it: the route reads JSON or a form itself. */
const ReplaceContentBody = Type.Union(
  [
    ...ReplaceContentJson.anyOf,
    Type.Object(
      {
        file: Type.String({
          format: 'binary',
          description: `The new file (${FILE_EXTENSIONS}, at most 100 MB).`,
        }),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'JSON `{text}` or `{url}` (each with an optional `language` and `access`), or multipart/form-data with one `file` part and optional `language` and `access` parts (`access`: a JSON array of principals encoded as a string).',
    examples: [{ text: 'Refunds are accepted within 60 days of purchase.' }],
  },
);

export function replaceContentRoute(app: FastifyInstance, deps: AppDeps): void {
  app.put<{ Params: { id: string } }>(
    '/documents/:id/content',
    {
      config: {
        scope: 'ingest',
        swaggerTransform: documentOnly({
          ...idempotentIngest,
          body: ReplaceContentBody,
          consumes: ['application/json', 'multipart/form-data'],
        }),
      },
      schema: {
        operationId: 'replaceContent',
        summary: 'Replace a document’s content',
        description:
          'Starts a new version of the document from new text (JSON `{text}`), a URL to download (JSON `{url}`) or an uploaded file (multipart `file`), processed with the document’s chunk settings. The current version keeps answering queries until the new one is ready, then the two are swapped in one step (no query sees both, none sees neither); if the new one fails, the current one stays and `pending_version.error` says why. A newer version sent meanwhile supersedes this one. Metadata and `external_id` stay; `access`, when given, replaces the access list at once (null removes it), else it stays.',
        tags: ['documents'],
        params: DocumentParams,
        querystring: PrincipalsQuery,
        response: {
          202: VersionAck,
          ...problemResponses(...COMMON_ERRORS, ...INGEST_ERRORS, 'not_found'),
        },
      },
    },
    async (request, reply) => {
      checkIdempotencyHeader(request);
      const orgId = request.principal.org.id;
      const { id } = request.params;
      if (request.isMultipart()) {
        let language: string | null = null;
        let accessList: string[] | null = null;
        const accepted = await readUploadForm(
          request,
          deps,
          ['language', 'access'],
          (fields) => {
            language = parseLanguagePart(fields.language ?? null);
            accessList = parseAccessPart(fields.access ?? null);
            return {};
          },
          // Unless the new version keeps it (a refused key, a replay, a failure), the upload is removed.
          (staged) =>
            runIdempotently(
              deps,
              request,
              `documents/${id}/content`,
              {
                sha256: staged.blob.sha256,
                filename: staged.filename,
                ...(language === null ? {} : { language }),
                ...(accessList === null ? {} : { access: accessList }),
              },
              (key) =>
                deps.ingestion.replaceContent(
                  orgId,
                  request.access,
                  id,
                  { kind: 'file', staged, language, ...(accessList === null ? {} : { access: accessList }) },
                  key,
                  request.traceSpan,
                ),
            ),
        );
        return sendAccepted(reply, accepted);
      }
      if (!validateJson(request.body)) {
        const message =
          'must be {"text": "…"} or {"url": "…"} (one of them, with optional language and access)';
        throw ERRORS.invalid(
          `Invalid request: the body ${message}, or a multipart form with a \`file\` part.`,
          [{ pointer: '', message }],
        );
      }
      const body = request.body as ReplaceContentJson;
      const newAccess = body.access === undefined ? {} : { access: body.access };
      const content: NewContent =
        'text' in body
          ? { kind: 'text', text: body.text, language: body.language ?? null, ...newAccess }
          : { kind: 'url', url: body.url, language: body.language ?? null, ...newAccess };
      return acceptIdempotently(deps, request, reply, `documents/${id}/content`, body, (key) =>
        deps.ingestion.replaceContent(orgId, request.access, id, content, key, request.traceSpan),
      );
    },
  );
}
