// Schemas of the /v1/sources routes (TypeBox → JSON Schema), with their examples. A source's
// `config` is its type's: POST picks the schema by `type` (if/then in the body schema), PATCH by
// the stored source's type (http/routes/sources/config-check.ts, called by the route).
import { type Static, Type } from '@sinclair/typebox';
import { PARTITION_PATTERN } from '../domain/partitions.js';
import { ACCESS_MAX_PRINCIPALS, PRINCIPAL_MAX_LENGTH } from '../domain/principals.js';
import { SOURCE_NAME_MAX_LENGTH, WEB_MAX_DEPTH, WEB_MAX_PAGES } from '../domain/sources.js';
import { Metadata } from './common.js';

const EXAMPLE_SOURCE_ID = 'src_45c48cce2e2d7fbdea1afc51c7c6ad26';
const EXAMPLE_RUN_ID = 'run_6512bd43d9caa6e02c990b0a82652dca';

export const SourceParams = Type.Object(
  {
    id: Type.String({ maxLength: 64, description: 'Source ID (`src_…`).', examples: [EXAMPLE_SOURCE_ID] }),
  },
  { additionalProperties: false },
);

const s3Fields = {
  bucket: Type.String({ minLength: 3, maxLength: 255, description: 'The bucket.' }),
  prefix: Type.Optional(
    Type.String({ maxLength: 1024, description: 'Only objects whose key starts with it (default: all).' }),
  ),
  region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Default `us-east-1`.' })),
  endpoint: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        'An S3-compatible server (`https://host[:port]`); absent: AWS S3. It must pass the URL-ingest address rules (public addresses, or those `URL_FETCH_ALLOW` names).',
    }),
  ),
  force_path_style: Type.Optional(
    Type.Boolean({
      description:
        'Address the bucket in the path (`host/bucket/key`): MinIO and most S3-compatible servers.',
    }),
  ),
};

const credentialFields = {
  access_key_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'With `secret_access_key`.' }),
  ),
  secret_access_key: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description:
        'Stored encrypted (the server needs `SECRETS_KEY`), never returned. Without credentials, the bucket is read unsigned (a public bucket).',
    }),
  ),
};

export const S3ConfigInput = Type.Object(
  { ...s3Fields, ...credentialFields },
  { additionalProperties: false, description: 'An `s3` source: a bucket, or the part of it under `prefix`.' },
);

const WebUrl = Type.String({ minLength: 1, maxLength: 2048 });
const WebPattern = Type.String({ minLength: 1, maxLength: 500 });

export const WebConfig = Type.Object(
  {
    start_urls: Type.Array(WebUrl, {
      maxItems: 100,
      description:
        'Where the crawl starts (depth 0); may be empty when `sitemap` is given. Each must pass the URL-ingest address rules.',
    }),
    sitemap: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'A sitemap or sitemap index (gzipped or not) whose URLs are crawled too, at depth 0.',
      }),
    ),
    include: Type.Optional(
      Type.Array(WebPattern, {
        maxItems: 50,
        description:
          'Globs over the whole URL (`*` is any characters): a URL is crawled only if it matches one. Absent: every URL.',
      }),
    ),
    exclude: Type.Optional(
      Type.Array(WebPattern, {
        maxItems: 50,
        description: 'Globs over the whole URL (`*` is any characters): a URL matching one is not crawled.',
      }),
    ),
    max_pages: Type.Integer({
      minimum: 1,
      maximum: WEB_MAX_PAGES,
      description: 'The most URLs (pages and linked documents) a run fetches.',
    }),
    max_depth: Type.Integer({
      minimum: 0,
      maximum: WEB_MAX_DEPTH,
      description: 'How many links away from a start URL the crawl goes (0: the start URLs only).',
    }),
    same_host: Type.Optional(
      Type.Boolean({
        description: 'Only URLs on a host of the start URLs or the sitemap (default `true`).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'A `web` source: a crawl obeying robots.txt. It has no credentials.',
  },
);

const S3ConfigShown = Type.Object(
  { ...s3Fields },
  { additionalProperties: false, description: 'The configuration without its credentials.' },
);

const Schedule = Type.String({
  minLength: 1,
  maxLength: 32,
  description:
    '`manual` (runs only when asked), or an ISO-8601 duration of at least `PT5M` (`PT1H`, `P1D`): a run starts that long after the previous scheduled one.',
});

const Partition = Type.String({
  pattern: PARTITION_PATTERN,
  description: 'The partition every document of the source goes into (`default` when absent).',
});

const Access = Type.Array(Type.String({ minLength: 1, maxLength: PRINCIPAL_MAX_LENGTH }), {
  minItems: 1,
  maxItems: ACCESS_MAX_PRINCIPALS,
  description:
    'Principals (`group:eng`, `user:42`): the access list of every document the source makes (set on each new version).',
});

const Name = Type.String({
  minLength: 1,
  maxLength: SOURCE_NAME_MAX_LENGTH,
  description: 'A name for people.',
});

const sourceFields = {
  name: Name,
  schedule: Type.Optional(Schedule),
  partition: Type.Optional(Partition),
  metadata: Type.Optional(Metadata),
  access: Type.Optional(Access),
};
const S3Body = Type.Object({ type: Type.Literal('s3'), config: S3ConfigInput, ...sourceFields });
const WebBody = Type.Object({ type: Type.Literal('web'), config: WebConfig, ...sourceFields });

/**
 * `config` is judged by the schema of the `type` given (if/then/else rather than anyOf, so a bad
 * field is reported against its own type's schema only).
 */
export const CreateSourceBody = Type.Unsafe<Static<typeof S3Body> | Static<typeof WebBody>>({
  type: 'object',
  required: ['type', 'name', 'config'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['s3', 'web'], description: 'The kind of collection.' },
    config: { type: 'object', description: "The type's configuration: see S3 and web below." },
    ...sourceFields,
  },
  allOf: [
    {
      if: { properties: { type: { const: 'web' } }, required: ['type'] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a promise
      then: { properties: { config: WebConfig } },
      else: { properties: { config: S3ConfigInput } },
    },
  ],
  examples: [
    {
      type: 's3',
      name: 'Policies bucket',
      config: {
        bucket: 'acme-policies',
        prefix: 'published/',
        region: 'eu-west-1',
        access_key_id: 'AKIAIOSFODNN7EXAMPLE',
        secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      },
      schedule: 'PT1H',
      metadata: { team: 'legal' },
    },
    {
      type: 'web',
      name: 'Handbook site',
      config: {
        start_urls: ['https://handbook.example.com/'],
        sitemap: 'https://handbook.example.com/sitemap.xml',
        exclude: ['*/archive/*'],
        max_pages: 2000,
        max_depth: 4,
      },
      schedule: 'P1D',
    },
  ],
});

export const PatchSourceBody = Type.Object(
  {
    name: Type.Optional(Name),
    config: Type.Optional(
      Type.Unsafe<Static<typeof S3ConfigInput> | Static<typeof WebConfig>>({
        type: 'object',
        description:
          "Replaces the configuration: the source's type's (s3 or web, as on create). Credentials left out keep the stored ones; given, they replace them.",
      }),
    ),
    schedule: Type.Optional(Schedule),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ schedule: 'P1D' }] },
);

export const SourceSchema = Type.Object(
  {
    id: Type.String({ description: 'Source ID.' }),
    org_id: Type.String(),
    type: Type.Union([Type.Literal('s3'), Type.Literal('web')]),
    name: Type.String(),
    config: Type.Union([S3ConfigShown, WebConfig], {
      description: "The type's configuration, without credentials.",
    }),
    has_credentials: Type.Boolean({ description: 'Whether credentials are stored (they are never shown).' }),
    schedule: Type.String(),
    next_run_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the schedule starts the next run; null for `manual`.',
    }),
    partition: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String(), {
      description: 'Added to every document of the source, with `source_id` and `source_key`.',
    }),
    access: Type.Union([Type.Array(Type.String()), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    examples: [
      {
        id: EXAMPLE_SOURCE_ID,
        org_id: 'org_1f0e3dad99908345f7439f8ffabdffc4',
        type: 's3',
        name: 'Policies bucket',
        config: { bucket: 'acme-policies', prefix: 'published/', region: 'eu-west-1' },
        has_credentials: true,
        schedule: 'PT1H',
        next_run_at: '2026-03-15T13:00:00.000Z',
        partition: null,
        metadata: { team: 'legal' },
        access: null,
        created_at: '2026-03-15T12:00:00.000Z',
        updated_at: '2026-03-15T12:00:00.000Z',
      },
    ],
  },
);

export const SourceList = Type.Object(
  { sources: Type.Array(SourceSchema, { description: 'Oldest first.' }) },
  { examples: [{ sources: SourceSchema.examples }] },
);

export const SyncAccepted = Type.Object(
  { run_id: Type.String({ description: 'The run, listed by GET /v1/sources/{id}/runs.' }) },
  { examples: [{ run_id: EXAMPLE_RUN_ID }] },
);

export const RunSchema = Type.Object({
  run_id: Type.String(),
  status: Type.Union(
    ['queued', 'running', 'completed', 'failed'].map((s) => Type.Literal(s)),
    {
      description:
        '`completed` even when some items failed (see `failed` and `errors`); `failed` when the run could not list the source.',
    },
  ),
  started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  added: Type.Integer({ description: 'New items, ingested as new documents.' }),
  updated: Type.Integer({ description: 'Changed items (another ETag): a new version of their document.' }),
  deleted: Type.Integer({ description: 'Items gone from the source: their documents deleted.' }),
  unchanged: Type.Integer({ description: 'Items as before: nothing done.' }),
  failed: Type.Integer({ description: 'Items that could not be ingested.' }),
  errors: Type.Array(
    Type.Object({
      item: Type.Union([Type.String(), Type.Null()], {
        description: 'The item key; null for the whole run.',
      }),
      code: Type.String(),
      message: Type.String(),
    }),
    { description: 'The first 100 errors.' },
  ),
});

export const RunList = Type.Object(
  { runs: Type.Array(RunSchema, { description: 'Newest first.' }) },
  {
    examples: [
      {
        runs: [
          {
            run_id: EXAMPLE_RUN_ID,
            status: 'completed',
            started_at: '2026-03-15T12:00:01.000Z',
            finished_at: '2026-03-15T12:00:09.000Z',
            added: 1,
            updated: 1,
            deleted: 1,
            unchanged: 240,
            failed: 1,
            errors: [
              {
                item: 'published/scan.tiff',
                code: 'unsupported_format',
                message: 'The file format is not supported.',
              },
            ],
          },
        ],
      },
    ],
  },
);

export const RunsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 20,
        description: 'Runs to list (1–100, default 20).',
      }),
    ),
  },
  { additionalProperties: false },
);
