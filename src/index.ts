// The package's public surface: the typed docindex client and its types.
export {
  type DeleteDocumentsOptions,
  DocindexClient,
  type DocindexClientOptions,
  type IngestFileOptions,
  type IngestOptions,
  type IngestTextOptions,
  type ListDocumentsOptions,
  MAX_IDS_PER_REQUEST,
  type QueryOptions,
  type RequestOptions,
  type WaitOptions,
  type WaitProgress,
} from './client/client.js';
export { DocindexError, WaitTimeoutError } from './client/errors.js';
export type {
  ChunkPage,
  DeleteDocumentsResult,
  DocindexErrorCode,
  DocumentPage,
  DocumentRecord,
  DocumentStatus,
  FieldError,
  IngestAck,
  Metadata,
  Problem,
  QueryFilter,
  QueryResponse,
  QueryResult,
  TextDocument,
  UsageReport,
} from './client/types.js';
