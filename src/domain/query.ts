// Answering queries: BM25-ranked chunks of one org's documents. A successful query counts one
// towards the org's usage for the current UTC day; a rejected one never reaches here.
import type { SearchIndex } from './ports.js';
import { cleanText } from './text.js';
import type { SearchHit } from './types.js';
import type { UsageService } from './usage.js';

export interface QueryInput {
  query: string;
  topK: number;
  filter: Record<string, string | string[]>;
  documentIds: string[] | null;
}

export class QueryService {
  constructor(
    private readonly index: SearchIndex,
    private readonly usage: UsageService,
  ) {}

  async query(orgId: string, input: QueryInput): Promise<SearchHit[]> {
    const filter: Record<string, string[]> = Object.create(null);
    for (const [key, value] of Object.entries(input.filter)) {
      filter[cleanText(key)] = (Array.isArray(value) ? value : [value]).map(cleanText);
    }
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
