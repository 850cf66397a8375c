// The client's request and response types, derived from the API's TypeBox schemas in wire/ (the
// same ones that validate requests and produce the OpenAPI document), so they are never written
// twice.
import type { Static } from '@sinclair/typebox';
import type { ErrorCode } from '../domain/errors.js';
import type {
  CreatedOrgSchema,
  CreatedWebhookSchema,
  CreateEvaluationBody,
  CreateSourceBody,
  DeleteDocumentsResponse,
  DeliveryList,
  DocumentList,
  DocumentRecordSchema,
  EvaluationList,
  EvaluationSchema,
  IngestAck as IngestAckSchema,
  IngestBody,
  IssuedKeySchema,
  KeySchema,
  OrgList,
  OrgResponse,
  OrgSchema,
  PartitionDeleteAck as PartitionDeleteAckSchema,
  PartitionList as PartitionListSchema,
  PatchSourceBody,
  Problem as ProblemSchema,
  PurgeReceiptSchema,
  QueryBody,
  QueryResponse as QueryResponseSchema,
  RunSchema,
  ScopeSchema,
  SourceSchema,
  UsageResponse,
  VersionAck as VersionAckSchema,
  WebhookSchema,
} from '../wire/index.js';

/** The partitions an API key may see, with their sizes (`GET /v1/partitions`). */
export type PartitionList = Static<typeof PartitionListSchema>;
export type Partition = PartitionList['partitions'][number];
/** The 202 answer of `DELETE /v1/partitions/{name}`. */
export type PartitionDeleteAck = Static<typeof PartitionDeleteAckSchema>;

/** The 202 answer of every ingest operation. */
export type IngestAck = Static<typeof IngestAckSchema>;
/** The 202 of replaceContent and reprocessDocument: the document and its new version. */
export type VersionAck = Static<typeof VersionAckSchema>;
/** A document's status record (`GET /v1/documents/{id}`). */
export type DocumentRecord = Static<typeof DocumentRecordSchema>;
export type DocumentStatus = DocumentRecord['status'];
/** One page of `GET /v1/documents`. */
export type DocumentPage = Static<typeof DocumentList>;
export type QueryResponse = Static<typeof QueryResponseSchema>;
export type QueryResult = QueryResponse['results'][number];
/** `GET /v1/usage`: queries per UTC day (today first) and the rate limit. */
export type UsageReport = Static<typeof UsageResponse>;
/** `GET /v1/org`: the key's organisation (id, name, rate limit) and the key's id and scopes. */
export type OrgInfo = Static<typeof OrgResponse>;
/** An RFC 9457 problem+json body as the API sends it. */
export type Problem = Static<typeof ProblemSchema>;
export type FieldError = NonNullable<Problem['errors']>[number];

type IngestBodyType = Static<typeof IngestBody>;
/** One document of a JSON text ingest. */
export type TextDocument = IngestBodyType['documents'][number];
export type Metadata = NonNullable<TextDocument['metadata']>;
/**
 * A metadata filter (query, list, delete): `{key: "v"}`, `{key: ["a", "b"]}`, operator objects
 * `{key: {$eq|$ne|$gt|$gte|$lt|$lte: "v", $in|$nin: [...], $exists: boolean}}`, and `$and`, `$or`,
 * `$not`. docs/SEARCH.md, "Filters", has the rules.
 */
export type QueryFilter = NonNullable<Static<typeof QueryBody>['filter']>;
/** `POST /v1/documents/delete`: how many went, and whether more still match. */
export type DeleteDocumentsResult = Static<typeof DeleteDocumentsResponse>;

/** Error codes the API answers with, plus the client's own for failures without an answer. */
export type DocindexErrorCode =
  | ErrorCode
  | 'network_error'
  | 'invalid_response'
  // A newer server may send codes this client does not know yet.
  | (string & Record<never, never>);

/** GET /v1/documents/{id}/chunks: the chunks a ready document was indexed as. */
export interface ChunkPage {
  chunks: {
    index: number;
    text: string;
    token_count: number;
    page_start: number | null;
    page_end: number | null;
  }[];
  next_cursor: string | null;
}

/** A document's original file (`getDocumentFile`). */
export interface DocumentFile {
  data: Uint8Array;
  /** The media type docindex detected, e.g. `application/pdf`. */
  contentType: string;
  /** The uploaded file's name (or the URL's last segment); null when there was none. */
  filename: string | null;
}

/** What an API key may do: `ingest`, `query`, `read`, `write`, `webhooks`. */
export type KeyScope = Static<typeof ScopeSchema>;
/** An organisation as the admin API shows it, with its usage. */
export type AdminOrg = Static<typeof OrgSchema>;
export type AdminOrgPage = Static<typeof OrgList>;
/** `POST /admin/v1/orgs`: the org and its first key (shown once). */
export type CreatedOrg = Static<typeof CreatedOrgSchema>;
/** `POST /admin/v1/orgs/{id}/keys`: the key, shown once. */
export type IssuedKey = Static<typeof IssuedKeySchema>;
/** A key as listed: its display prefix, never the key. */
export type AdminKey = Static<typeof KeySchema>;
/** `DELETE /admin/v1/orgs/{id}`: what was removed. */
export type PurgeReceipt = Static<typeof PurgeReceiptSchema>;

/** A webhook endpoint as listed (its secret is shown only by createWebhook). */
export type Webhook = Static<typeof WebhookSchema>;
/** `POST /v1/webhooks`: the endpoint and its signing secret (`whsec_…`), shown once. */
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>;
/** `GET /v1/webhooks/{id}/deliveries`: the newest attempts and how many messages wait. */
export type WebhookDeliveries = Static<typeof DeliveryList>;
/** The document and source events an endpoint can subscribe to. */
export type WebhookEvent = Webhook['events'][number];

/** The body of POST /v1/evaluations: queries with judged documents, runs, top_k. */
export type EvaluationRequest = CreateEvaluationBody;
/** One judged query of an evaluation. */
export type EvaluationQuery = EvaluationRequest['queries'][number];
/** The settings of one run of an evaluation. */
export type EvaluationRun = NonNullable<EvaluationRequest['runs']>[number];
/** An evaluation: status, each run's figures and, from getEvaluation once done, each query's. */
export type Evaluation = Static<typeof EvaluationSchema>;
/** A page of evaluations, newest first. */
export type EvaluationPage = Static<typeof EvaluationList>;
/** A source as the API shows it: its configuration without credentials. */
export type Source = Static<typeof SourceSchema>;
/** `POST /v1/sources`: a new source (credentials go in `config`; they are never shown again). */
export type NewSource = Static<typeof CreateSourceBody>;
/** `PATCH /v1/sources/{id}`: the fields to change. */
export type SourceUpdate = Static<typeof PatchSourceBody>;
/** One run of a source: its status, counts and first errors. */
export type SourceRun = Static<typeof RunSchema>;
