// The variables of keyword search: the language documents are read in and the proximity bonus.
import type { VariableTable } from '../variable.js';

/** How documents and queries are read for keyword search. */
export const SEARCH_VARIABLES = {
  searchLanguage: {
    env: 'SEARCH_LANGUAGE',
    type: 'string',
    default: 'auto',
    pattern: {
      test: /^(auto|none|english|[a-z]{2})$/,
      invalid: 'SEARCH_LANGUAGE must be `auto`, `none` or an ISO 639-1 language code such as `en` or `de`',
    },
    description:
      "the language of documents that name none at ingest: `auto` (told from each document's text; English when it cannot be told), an ISO 639-1 code (`en`, `de`, …: every such document is taken to be in it), or `none` (no stemming). Each document is analysed in its own language (stemming, Chinese/Japanese/Thai word segmentation, Korean particles, accent folding); a query is read in the languages of the org's documents. Changing it affects documents indexed afterwards",
  },
  searchProximity: {
    env: 'SEARCH_PROXIMITY',
    type: 'bool',
    default: false,
    description:
      'add to BM25 a bonus for query words that stand close together in a chunk (computed on the best 30 or top_k chunks). Off by default: it helps some collections and hurts others (bench/RESULTS.md, section 11)',
  },
} satisfies Partial<VariableTable>;
