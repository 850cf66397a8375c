// The search and version contracts against PostgreSQL (the rest: postgres.test.ts): keyword
// search on both of its layouts, RUM and GIN, each running the whole search contract; the filter
// language; document versions.
import { describeScaleOut, REQUIRED } from '../scale-out/services.js';
import { documentVersionsContract } from './document-versions.contract.js';
import { filterContract } from './filter.contract.js';
import { keywordIndexContract } from './keyword-index.contract.js';
import { rum, services, stores, storesOn } from './postgres-support.js';

describeScaleOut('PostgreSQL search', services, () => {
  documentVersionsContract('PgDocumentStore versions', stores);
  if (rum || REQUIRED) keywordIndexContract('PgKeywordIndex (RUM)', storesOn(true));
  else console.log('PgKeywordIndex (RUM) skipped: the rum extension is not available (postgresql-15-rum)');
  keywordIndexContract('PgKeywordIndex (GIN)', storesOn(false));
  filterContract('PostgreSQL filters', stores);
});
