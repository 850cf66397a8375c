// The package's public surface: the typed docindex client and its types.

export { AdminClient, type AdminClientOptions, type CreateKeyOptions } from './client/admin-client.js';
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
  AdminKey,
  AdminOrg,
  AdminOrgPage,
  ChunkPage,
  CreatedOrg,
  DeleteDocumentsResult,
  DocindexErrorCode,
  DocumentFile,
  DocumentPage,
  DocumentRecord,
  DocumentStatus,
  FieldError,
  IngestAck,
  IssuedKey,
  KeyScope,
  Metadata,
  Problem,
  PurgeReceipt,
  QueryFilter,
  QueryResponse,
  QueryResult,
  TextDocument,
  UsageReport,
} from './client/types.js';
