// The variables of the server process: its address, its folders (data, files, models) and the
// Hub models are pulled from, its HTTP timeouts, the proxy it sits behind and its log level.
import path from 'node:path';
import type { VariableTable } from '../variable.js';

/**
 * Where the server listens, the folders it keeps its data, files and models in, and the Hugging
 * Face Hub `docindex models pull` downloads from.
 */
export const SERVER_VARIABLES = {
  host: { env: 'HOST', type: 'string', default: '127.0.0.1', description: 'address to listen on' },
  port: {
    env: 'PORT',
    type: 'int',
    default: 8080,
    min: 0,
    max: 65535,
    description: 'port to listen on (`0` picks a free one)',
  },
  dataDir: {
    env: 'DATA_DIR',
    type: 'string',
    default: './data',
    path: true,
    description: 'embedded mode: the SQLite file `docindex.db` and uploaded files',
  },
  blobDir: {
    env: 'BLOB_DIR',
    type: 'string',
    default: (read) => path.join(read.dataDir ?? '', 'blobs'),
    defaultText: '`$DATA_DIR/blobs`',
    path: true,
    description:
      'with `BLOB_STORE=fs`: where uploaded and downloaded files are kept (a volume every process mounts in scale-out)',
  },
  modelsDir: {
    env: 'MODELS_DIR',
    type: 'string',
    default: (read) => path.join(read.dataDir ?? '', 'models'),
    defaultText: '`$DATA_DIR/models`',
    path: true,
    description:
      'where `docindex models pull` puts models (one folder per model, e.g. `Xenova/bge-small-en-v1.5`); the server never downloads',
  },
  hfEndpoint: {
    env: 'HF_ENDPOINT',
    type: 'string',
    default: 'https://huggingface.co',
    pattern: {
      test: /^https?:\/\/[^\s/]+(\/[^\s]*)?$/i,
      invalid: 'HF_ENDPOINT must be an http:// or https:// URL (e.g. https://huggingface.co)',
    },
    description: '`docindex models pull`: the Hugging Face Hub (or a mirror) models are downloaded from',
  },
  hfToken: {
    env: 'HF_TOKEN',
    type: 'string',
    default: '',
    defaultText: '—',
    description:
      '`docindex models pull`: a Hugging Face access token, sent as `Authorization: Bearer …` to `HF_ENDPOINT` only (never to the CDN it redirects downloads to); private and gated models need one',
  },
} satisfies Partial<VariableTable>;

/** How long a request and its headers may take. */
export const HTTP_TIMEOUT_VARIABLES = {
  requestTimeoutMs: {
    env: 'REQUEST_TIMEOUT_MS',
    type: 'int',
    default: 300_000,
    min: 1_000,
    max: 3_600_000,
    description: 'whole-request time cap',
  },
  headersTimeoutMs: {
    env: 'HEADERS_TIMEOUT_MS',
    type: 'int',
    default: 10_000,
    min: 500,
    max: 600_000,
    description: 'time cap for a client to send its headers (slow-loris)',
  },
} satisfies Partial<VariableTable>;

/** The client address behind a proxy, and the log level. */
export const PROXY_AND_LOG_VARIABLES = {
  trustProxy: {
    env: 'TRUST_PROXY',
    type: 'bool',
    default: false,
    description: 'take the client address from `X-Forwarded-For`',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    type: 'string',
    default: 'info',
    oneOf: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    description: '`fatal` … `trace`, or `silent`',
  },
} satisfies Partial<VariableTable>;
