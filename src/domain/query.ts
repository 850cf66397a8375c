// Answering queries: BM25-ranked chunks of one org's documents. A successful query counts one
// towards the org's usage for the current UTC day; a rejected one never reaches here.
import { type FilterJson, parseFilter } from './filter.js';
import type { SearchIndex } from './ports.js';
import { cleanText } from './text.js';
import type { SearchHit } from './types.js';
import type { UsageService } from './usage.js';

export interface QueryInput {
  query: string;
  topK: number;
  /** The request's `filter` as sent: parsed here, refused (400, pointing into /filter) if invalid. */
  filter: FilterJson | undefined;
  documentIds: string[] | null;
}

export class QueryService {
  constructor(
    private readonly index: SearchIndex,
    private readonly usage: UsageService,
  ) {}

  async query(orgId: string, input: QueryInput): Promise<SearchHit[]> {
    const filter = input.filter === undefined ? null : parseFilter(input.filter, '/filter');
    const hits = await this.index.search({
      orgId,
      query: cleanText(input.query),
      topK: input.topK,
      filter,
      documentIds: input.documentIds,
    });
    await this.usage.recordQuery(orgId);
    return hits;
  }
}
