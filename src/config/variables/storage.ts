// The variables of storage: the records' database (SQLite or PostgreSQL), Redis, the blob store
// (a folder, PostgreSQL or an S3 bucket) and whether originals are kept.
import { BLOB_STORES } from '../config.js';
import type { VariableTable } from '../variable.js';

/**
 * The databases (SQLite or PostgreSQL, Redis) and where uploaded and downloaded files are kept (a
 * folder, PostgreSQL or S3).
 */
export const STORAGE_VARIABLES = {
  databaseUrl: {
    env: 'DATABASE_URL',
    type: 'url',
    scheme: /^postgres(ql)?:\/\//,
    invalid: 'DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for embedded SQLite)',
    description: '`postgres://…` selects PostgreSQL',
  },
  databaseSchema: {
    env: 'DATABASE_SCHEMA',
    type: 'string',
    default: 'public',
    pattern: {
      test: /^[a-z_][a-z0-9_]{0,62}$/,
      invalid: 'DATABASE_SCHEMA must be a lower-case SQL identifier (letters, digits, underscore)',
    },
    description: "PostgreSQL schema for docindex's tables",
  },
  databaseOrgMaxConnections: {
    env: 'DATABASE_ORG_MAX_CONNECTIONS',
    type: 'int',
    default: 0,
    defaultText: '0 (half the pool)',
    min: 0,
    max: 1000,
    description:
      "PostgreSQL connections one organisation's API requests may hold at once in one process, out of its pool of max(10, 2 × `WORKER_CONCURRENCY` + 4): more wait their turn for up to 5 s, then answer 503 `overloaded`, so one tenant's requests never take every connection from the others; 0: half the pool",
  },
  redisUrl: {
    env: 'REDIS_URL',
    type: 'url',
    scheme: /^rediss?:\/\//,
    invalid: 'REDIS_URL must be a redis:// or rediss:// URL',
    description: '`redis://…` selects BullMQ for jobs and Redis for the rate limiter',
  },
  blobStore: {
    env: 'BLOB_STORE',
    type: 'string',
    default: (read) => (read.databaseUrl ? 'postgres' : 'fs'),
    defaultText: '`fs`; `postgres` when `DATABASE_URL` is set',
    oneOf: BLOB_STORES,
    description:
      'where uploaded and downloaded files are kept: `fs` (the folder `BLOB_DIR`), `postgres` (in chunks in the database of `DATABASE_URL`, so scale-out needs no shared folder) or `s3` (an S3-compatible bucket, `S3_*` below)',
  },
  s3Endpoint: {
    env: 'S3_ENDPOINT',
    type: 'url',
    scheme: /^https?:\/\//,
    invalid: 'S3_ENDPOINT must be an http:// or https:// URL (leave it unset for AWS S3)',
    description: 'with `BLOB_STORE=s3`: the S3 endpoint (MinIO, R2, …); unset for AWS S3',
  },
  s3Bucket: {
    env: 'S3_BUCKET',
    type: 'string',
    default: '',
    defaultText: '—',
    description: 'with `BLOB_STORE=s3`: the bucket (required; it must exist)',
  },
  s3Region: {
    env: 'S3_REGION',
    type: 'string',
    default: 'us-east-1',
    description: "with `BLOB_STORE=s3`: the bucket's region",
  },
  s3AccessKeyId: {
    env: 'S3_ACCESS_KEY_ID',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      "with `BLOB_STORE=s3`: access key id; unset, the AWS SDK's default credential chain (environment, profile, instance role) is used",
  },
  s3SecretAccessKey: {
    env: 'S3_SECRET_ACCESS_KEY',
    type: 'string',
    default: '',
    defaultText: '—',
    description: 'with `BLOB_STORE=s3`: the secret of `S3_ACCESS_KEY_ID` (set both or neither)',
  },
  s3ForcePathStyle: {
    env: 'S3_FORCE_PATH_STYLE',
    type: 'bool',
    default: false,
    description:
      'with `BLOB_STORE=s3`: address the bucket as `endpoint/bucket/key` rather than `bucket.endpoint/key` (MinIO and most self-hosted servers need it)',
  },
  redisPrefix: {
    env: 'REDIS_PREFIX',
    type: 'string',
    default: 'docindex',
    pattern: {
      test: /^[A-Za-z0-9_.-]{1,64}$/,
      invalid: 'REDIS_PREFIX must be 1-64 characters of letters, digits, `_`, `.` or `-`',
    },
    description: 'prefix of Redis keys and queue names',
  },
} satisfies Partial<VariableTable>;

/** Whether a document's original file is kept once it is indexed. */
export const ORIGINALS_VARIABLES = {
  keepOriginals: {
    env: 'KEEP_ORIGINALS',
    type: 'bool',
    default: true,
    description:
      'keep each document’s uploaded or downloaded file after it is indexed (`GET /v1/documents/{id}/file`, reprocessing from the original); `false` deletes it once its version is ready, and those two then answer 410 `original_not_kept` and 409 `cannot_reprocess`',
  },
} satisfies Partial<VariableTable>;
