// Every SQLite migration in version order, from the files of this folder (each named by its
// first version and what its migrations bring). Append only: a migration that has shipped is never
// edited, because databases in the field have already recorded its version and will not run it
// again. A new migration goes at the end of the last file, or, once that file is long, first in a
// new file listed last here.
import { MIGRATIONS as core } from './0001-core.js';
import { MIGRATIONS as versionsWebhooksVectors } from './0010-versions-webhooks-vectors.js';
import { MIGRATIONS as languagesPartitionsSources } from './0120-languages-partitions-sources.js';
import type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  ...core,
  ...versionsWebhooksVectors,
  ...languagesPartitionsSources,
];
