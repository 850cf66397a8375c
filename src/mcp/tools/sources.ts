// The source tools: the organisation's sources with their newest runs (`GET /v1/sources`) and a
// run started now (`POST /v1/sources/{id}/sync`).
import { z } from 'zod';
import { adds, READS, TOOL_SCOPES, type ToolContext } from './shared.js';

const syncSourceInput = {
  id: z.string().min(1).max(64).describe('The source’s id (`src_…`), as list_sources gives it.'),
};

const runOutput = z.looseObject({
  run_id: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed']),
  added: z.number().int(),
  updated: z.number().int(),
  deleted: z.number().int(),
  unchanged: z.number().int(),
  failed: z.number().int(),
});

const listSourcesOutput = {
  sources: z.array(
    z.looseObject({
      id: z.string(),
      name: z.string(),
      type: z.string(),
      schedule: z.string(),
      last_run: runOutput.nullable(),
    }),
  ),
};

const syncSourceOutput = { run_id: z.string() };

export function registerSourceTools({ server, api, run }: ToolContext): void {
  server.registerTool(
    'list_sources',
    {
      title: 'List sources',
      description: `The organisation’s sources: collections (S3 buckets, crawled web sites) whose items are kept in sync as documents, each with its schedule and its newest run (status and counts: added, updated, deleted, unchanged, failed). Documents of a source carry the metadata source_id and source_key (the object key or the page URL), so search can be narrowed to one with filter {"source_id": "…"}. Needs the \`${TOOL_SCOPES.list_sources}\` key scope.`,
      inputSchema: {},
      outputSchema: listSourcesOutput,
      annotations: READS,
    },
    run('list_sources', () => api.listSources()),
  );

  server.registerTool(
    'sync_source',
    {
      title: 'Sync a source now',
      description: `Starts a run of a source: new items are ingested, changed ones become new versions, deleted ones are removed. Returns the run_id; list_sources shows the run’s status and counts. Fails with sync_in_progress while a run of that source is already queued or running. Needs the \`${TOOL_SCOPES.sync_source}\` key scope.`,
      inputSchema: syncSourceInput,
      outputSchema: syncSourceOutput,
      annotations: adds(true),
    },
    run('sync_source', (args: { id: string }) => api.syncSource(args.id)),
  );
}
