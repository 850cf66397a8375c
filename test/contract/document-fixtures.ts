// What the DocumentStore and KeywordIndex contract suites share: the harness (a record store and
// the keyword index its saveIndex writes), each test's fresh set-up on it, and document, chunk,
// query and webhook endpoint builders.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect } from 'vitest';
import { type Filter, type FilterJson, parseFilter } from '../../src/domain/filter.js';
import type { DocumentStore, KeywordIndex } from '../../src/domain/ports.js';
import type { SearchLanguage } from '../../src/domain/search-words.js';
import type {
  ChunkList,
  ChunkRow,
  IndexResult,
  ListQuery,
  NewDocument,
  SearchQuery,
  StartedVersion,
} from '../../src/domain/types.js';
import type { WebhookStore } from '../../src/domain/webhooks.js';

export interface DocumentStoreHarness {
  store: DocumentStore;
  /** The keyword index `store.saveIndex` writes. */
  index: KeywordIndex;
  /** Another store and index on the same database, with other options: as another process. */
  reopen(options: DocumentStoreOptions): { store: DocumentStore; index: KeywordIndex };
  /** Records the index's words as written by `analysis` (an earlier release's, say). */
  setWrittenAnalysis(analysis: string): Promise<void>;
  close(): Promise<void>;
}

/** Constructor options every adapter takes; a harness passes them on to its store. */
export interface DocumentStoreOptions {
  /** Most matching chunks one query may rank (the adapters default to 20,000). */
  searchRowBudget?: number;
  /** SEARCH_LANGUAGE (the adapters default to 'auto'). */
  language?: SearchLanguage;
}

/** What each test of a suite starts from: a harness of its own, its store and index, two new orgs. */
export interface DocumentStoreSetup {
  h: DocumentStoreHarness;
  store: DocumentStore;
  index: KeywordIndex;
  orgA: string;
  orgB: string;
}

/**
 * In the calling describe block: before each test, makes a harness (with no options) and two org
 * ids and hands them to `use`; after it, closes that harness.
 */
export function eachTestOnFreshStore(
  make: (options: DocumentStoreOptions) => Promise<DocumentStoreHarness>,
  use: (setup: DocumentStoreSetup) => void,
): void {
  let h: DocumentStoreHarness;
  beforeEach(async () => {
    h = await make({});
    use({ h, store: h.store, index: h.index, orgA: `org_${randomUUID()}`, orgB: `org_${randomUUID()}` });
  });
  afterEach(async () => {
    await h.close();
  });
}

/**
 * The one form every adapter stores strings in (PostgreSQL cannot hold NUL; UTF-8 cannot hold a
 * lone surrogate): NUL removed, each lone surrogate replaced by U+FFFD. The HTTP edge cleans input
 * the same way; the stores do it too so no adapter can diverge.
 */
export function canonicalText(s: string): string {
  return s.replaceAll('\u0000', '').replace(/[\uD800-\uDFFF]/gu, '\uFFFD');
}

export const T0 = Date.parse('2025-06-01T12:00:00.000Z');

/** One document written alone: created, or a new version of the org's one with its external_id. */
export async function createOne(store: DocumentStore, doc: NewDocument): Promise<StartedVersion> {
  const [started] = await store.createDocuments([doc]);
  return started!;
}

export function newDoc(orgId: string, over: Partial<NewDocument> = {}): NewDocument {
  return {
    id: randomUUID(),
    orgId,
    source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
    metadata: {},
    chunkSize: 512,
    chunkOverlap: 64,
    tokenizer: 'o200k_base',
    createdAt: new Date(T0),
    text: 'some input text',
    blobKey: null,
    fetchUrl: null,
    ...over,
  };
}

export function chunks(texts: string[]): ChunkRow[] {
  let offset = 0;
  return texts.map((text, index) => {
    const row: ChunkRow = {
      index,
      text,
      tokenCount: text.split(/\s+/).filter(Boolean).length,
      charStart: offset,
      charEnd: offset + text.length,
      pageStart: null,
      pageEnd: null,
    };
    offset += text.length;
    return row;
  });
}

export type ListedIndex = ChunkList & Pick<IndexResult, 'contentType' | 'bytes'>;

export function indexResult(texts: string[], over: Partial<ListedIndex> = {}): ListedIndex {
  const rows = chunks(texts);
  return {
    chunks: rows,
    tokenCount: rows.reduce((n, c) => n + c.tokenCount, 0),
    contentSha256: 'a'.repeat(64),
    contentType: null,
    bytes: null,
    ...over,
  };
}

/** The same chunks as a stream: `batches` of them, arriving one at a time. */
export function streamed(result: ListedIndex, batches: number): IndexResult {
  const size = Math.ceil(result.chunks.length / batches);
  const { chunks: list, tokenCount, contentSha256, ocrPages, contentType, bytes } = result;
  return {
    chunks: (async function* () {
      for (let i = 0; i < list.length; i += size) {
        await new Promise((resolve) => setImmediate(resolve));
        yield list.slice(i, i + size);
      }
    })(),
    totals: () => ({ tokenCount, contentSha256, ocrPages }),
    contentType,
    bytes,
  };
}

/** Creates a document in `store` and indexes the given chunk texts: a `ready` document. */
export async function indexedInto(
  store: DocumentStore,
  orgId: string,
  texts: string[],
  over: Partial<NewDocument> = {},
): Promise<NewDocument> {
  const doc = newDoc(orgId, over);
  await store.createDocuments([doc]);
  expect(await store.saveIndex(doc.id, indexResult(texts))).toBe(true);
  return doc;
}

export function query(orgId: string, text: string, over: Partial<SearchQuery> = {}): SearchQuery {
  return { orgId, query: text, topK: 10, filter: null, documentIds: null, ...over };
}

/** A filter as the API would parse it from JSON. */
export function where(json: FilterJson): Filter | null {
  return parseFilter(json, '/filter');
}

export function list(orgId: string, over: Partial<ListQuery> = {}): ListQuery {
  return {
    orgId,
    limit: 100,
    after: null,
    status: null,
    ids: null,
    contentSha256: null,
    filter: null,
    ...over,
  };
}

export const FILLER = [
  'the committee reviewed the annual budget in detail',
  'rain is expected over the northern hills tomorrow',
  'a new bridge opened to traffic on monday morning',
  'the library extended its opening hours for students',
  'engineers replaced the pumps at the water plant',
  'the orchestra rehearsed a symphony by dvorak',
  'farmers reported an early harvest of apples',
  'the museum acquired a collection of old maps',
];

/** Strings that would break a naive FTS5 / tsquery / LIKE translation. */
export const HOSTILE_QUERIES = [
  '"',
  '""',
  '"unterminated',
  '*',
  'quokka*',
  '^quokka',
  'NEAR(',
  'NEAR(quokka habitat, 2)',
  'AND',
  'OR',
  'NOT',
  'quokka AND',
  'AND OR NOT',
  '(',
  ')',
  '((quokka)',
  'text:quokka',
  'org:quokka',
  '{text org}: quokka',
  '-quokka',
  '+quokka',
  'quokka:*',
  "quokka' OR 1=1 --",
  '\\',
  '%_%',
  '\u0000',
  'quo\u0000kka',
  '\uD800',
  '\uDC00quokka',
  '😀',
  '😀 quokka 🦘',
  'ﬁ ß İ ǅ',
  '中文 检索',
  'עברית',
  '   ',
  '',
  '!@#$%^&*()_+=[]{}|;:,.<>?/~`',
  '&|!<->',
  'quokka & habitat | !zoo',
  'x'.repeat(10_000),
  Array.from({ length: 500 }, (_, i) => `w${i}`).join(' '),
];

/** An enabled endpoint of the org subscribed to `events`, made in `webhooks`; its id. */
export async function addWebhookEndpoint(
  webhooks: WebhookStore,
  orgId: string,
  events: string[],
): Promise<string> {
  const id = `wh_${randomUUID().replaceAll('-', '')}`;
  await webhooks.createEndpoint(
    {
      id,
      orgId,
      url: 'https://hooks.example.com/',
      events: events as never,
      description: null,
      secret: 'whsec_x',
      createdAt: new Date(),
      disabledAt: null,
      disabledReason: null,
      failingSince: null,
      droppedMessages: 0,
    },
    10,
  );
  return id;
}
