// Every environment variable docindex reads, declared once: its name, type, default, limits and
// the sentence the configuration table (docs/CONFIGURATION.md) shows. Each area declares its own in
// variables/; VARIABLES gathers them here in the table's order. loadConfig (index.ts) reads the
// environment from this list and config-table.ts writes the table from it, so the two cannot
// disagree.
import { installedOcrLanguages, missingOcrLanguages } from '../pipeline/ocr/languages.js';
import type { Config } from './config.js';
import type { VariableTable } from './variable.js';
import { ADMIN_VARIABLES, RATE_LIMIT_VARIABLES } from './variables/access.js';
import { EMBEDDING_VARIABLES } from './variables/embeddings.js';
import { INTAKE_VARIABLES, JOB_VARIABLES, PIPELINE_VARIABLES } from './variables/pipeline.js';
import { RERANK_VARIABLES } from './variables/rerank.js';
import { SEARCH_VARIABLES } from './variables/search.js';
import { HTTP_TIMEOUT_VARIABLES, PROXY_AND_LOG_VARIABLES, SERVER_VARIABLES } from './variables/server.js';
import { ORIGINALS_VARIABLES, STORAGE_VARIABLES } from './variables/storage.js';
import { TRACING_VARIABLES } from './variables/tracing.js';
import { WEBHOOK_VARIABLES } from './variables/webhooks.js';

/**
 * One entry per Config field, in the configuration table's order (also the order in which problems are
 * listed). Variables whose default depends on another come after it.
 */
export const VARIABLES: VariableTable = {
  ...SERVER_VARIABLES,
  ...STORAGE_VARIABLES,
  ...RATE_LIMIT_VARIABLES,
  ...SEARCH_VARIABLES,
  ...ADMIN_VARIABLES,
  ...PIPELINE_VARIABLES,
  ...INTAKE_VARIABLES,
  ...JOB_VARIABLES,
  ...WEBHOOK_VARIABLES,
  ...HTTP_TIMEOUT_VARIABLES,
  ...ORIGINALS_VARIABLES,
  ...TRACING_VARIABLES,
  ...PROXY_AND_LOG_VARIABLES,
  ...EMBEDDING_VARIABLES,
  ...RERANK_VARIABLES,
};

/** OCR_LANGUAGES as used: English when unset. */
export function ocrLanguagesOf(config: Pick<Config, 'ocrLanguages'>): string[] {
  return config.ocrLanguages.length > 0 ? config.ocrLanguages : ['eng'];
}

/** Rules that involve several variables, checked once each variable has been read. */
export const RULES: Array<(config: Config) => string | null> = [
  (config) =>
    config.secretsKeyPrevious !== '' && config.secretsKey === ''
      ? 'SECRETS_KEY_PREVIOUS is set but SECRETS_KEY is not: a rotation needs the new key in SECRETS_KEY'
      : null,
  (config) => {
    const missing = missingOcrLanguages(ocrLanguagesOf(config));
    if (missing.length === 0) return null;
    const installed = installedOcrLanguages();
    return (
      `OCR_LANGUAGES names ${missing.map((code) => JSON.stringify(code)).join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not installed. ` +
      `Installed: ${installed.length > 0 ? installed.join(', ') : 'none'}. Add one with npm install @tesseract.js-data/<code>`
    );
  },
  (config) =>
    config.redisUrl !== null && config.databaseUrl === null
      ? 'REDIS_URL is set but DATABASE_URL is not: scale-out keeps records and the full-text index in ' +
        'PostgreSQL, and Redis only carries jobs and rate-limit counters. Set DATABASE_URL=postgres://… ' +
        'as well, or unset REDIS_URL to run embedded on SQLite'
      : null,
  (config) =>
    config.blobStore === 'postgres' && config.databaseUrl === null
      ? 'BLOB_STORE=postgres keeps files in the PostgreSQL database of DATABASE_URL, which is not set. ' +
        'Set DATABASE_URL=postgres://…, or choose BLOB_STORE=fs or BLOB_STORE=s3'
      : null,
  (config) =>
    config.blobStore === 's3' && config.s3Bucket === ''
      ? 'BLOB_STORE=s3 needs S3_BUCKET (the name of an existing bucket)'
      : null,
  (config) =>
    config.embeddings === 'openai' && (config.embeddingsUrl === null || config.embeddingsModel === '')
      ? 'EMBEDDINGS=openai needs EMBEDDINGS_URL (e.g. http://127.0.0.1:11434/v1) and EMBEDDINGS_MODEL'
      : null,
  (config) =>
    config.embeddings === 'onnx' && config.embeddingsModelDir === ''
      ? 'EMBEDDINGS=onnx needs EMBEDDINGS_MODEL_DIR (a local sentence-transformer folder with onnx/model.onnx)'
      : null,
  (config) =>
    config.rerank === 'http' && config.rerankUrl === null
      ? 'RERANK=http needs RERANK_URL (e.g. http://127.0.0.1:8081 for TEI, https://api.cohere.com/v2 for Cohere)'
      : null,
  (config) =>
    config.rerank === 'onnx' && config.rerankModelDir === ''
      ? 'RERANK=onnx needs RERANK_MODEL_DIR (a local cross-encoder folder with onnx/model.onnx)'
      : null,
  (config) =>
    (config.s3AccessKeyId === '') !== (config.s3SecretAccessKey === '')
      ? 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both, or neither to use the AWS SDK default credential chain'
      : null,
];
