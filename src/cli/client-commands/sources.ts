// `docindex sources add|list|sync|runs|rm`: an org's sources over HTTP with DocindexClient.
// Credentials are never flags (they would sit in shell history and the process list): `--aws-env`
// reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from the environment. `--json` prints the
// API's JSON body as it is.
import type { NewSource, Source, SourceRun } from '../../client/types.js';
import { keyValues, UsageError, wholeNumber } from '../args.js';
import { renderTable, type TerminalIO } from '../render.js';
import { connect, type Env, parseClientArguments } from './shared.js';

export const SOURCES_USAGE = `  docindex sources add s3 --name NAME --bucket B [--prefix P] [--region R] [--endpoint URL]
                    [--path-style] [--aws-env] [--schedule manual|PT1H|…] [--metadata k=v …] [--json]
                                   register an S3 bucket kept in sync (--aws-env: credentials from
                                   AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)
  docindex sources add web --name NAME [--start-url URL …] [--sitemap URL] [--include GLOB …]
                    [--exclude GLOB …] --max-pages N --max-depth N [--any-host]
                    [--schedule manual|PT1H|…] [--metadata k=v …] [--json]
                                   register a web site crawled and kept in sync (robots.txt obeyed;
                                   --any-host: follow links to other hosts too)
  docindex sources list [--json]   the org's sources
  docindex sources sync <id> [--wait] [--json]
                                   start a run (--wait: until it ends, then its counts)
  docindex sources runs <id> [--limit N] [--json]
                                   the newest runs: status, added, updated, deleted, unchanged, failed
  docindex sources rm <id…>        delete sources (their documents are deleted in the background)`;

const WAIT_POLL_MS = 500;

function renderSources(sources: Source[]): string {
  return renderTable([
    ['ID', 'NAME', 'TYPE', 'WHERE', 'SCHEDULE', 'CREDENTIALS'],
    ...sources.map((s) => [s.id, s.name, s.type, where(s), s.schedule, s.has_credentials ? 'yes' : 'no']),
  ]);
}

/** The bucket (and prefix) of an s3 source; the first start URL (or the sitemap) of a web one. */
function where(source: Source): string {
  const config = source.config;
  if ('bucket' in config) return `${config.bucket}${config.prefix ? `/${config.prefix}` : ''}`;
  const first = config.start_urls[0] ?? config.sitemap ?? '-';
  return config.start_urls.length > 1 ? `${first} (+${config.start_urls.length - 1})` : first;
}

function renderRuns(runs: SourceRun[]): string {
  return renderTable([
    ['RUN', 'STATUS', 'STARTED', 'FINISHED', 'ADDED', 'UPDATED', 'DELETED', 'UNCHANGED', 'FAILED'],
    ...runs.map((r) => [
      r.run_id,
      r.status,
      r.started_at ?? '-',
      r.finished_at ?? '-',
      String(r.added),
      String(r.updated),
      String(r.deleted),
      String(r.unchanged),
      String(r.failed),
    ]),
  ]);
}

export async function sourcesCommand(args: string[], env: Env, io: TerminalIO): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add': {
      const { values, positionals } = parseClientArguments(rest, {
        name: { type: 'string' },
        bucket: { type: 'string' },
        prefix: { type: 'string' },
        region: { type: 'string' },
        endpoint: { type: 'string' },
        'path-style': { type: 'boolean' },
        'aws-env': { type: 'boolean' },
        'start-url': { type: 'string', multiple: true },
        sitemap: { type: 'string' },
        include: { type: 'string', multiple: true },
        exclude: { type: 'string', multiple: true },
        'max-pages': { type: 'string' },
        'max-depth': { type: 'string' },
        'any-host': { type: 'boolean' },
        schedule: { type: 'string' },
        metadata: { type: 'string', multiple: true },
        json: { type: 'boolean' },
      });
      const type = positionals[0];
      if (positionals.length !== 1 || (type !== 's3' && type !== 'web')) {
        throw new UsageError('sources add needs the type: s3 or web');
      }
      if (values.name === undefined) throw new UsageError(`sources add ${type} needs --name`);
      const metadata = Object.fromEntries(keyValues(values.metadata, '--metadata'));
      const common = {
        name: values.name,
        ...(values.schedule === undefined ? {} : { schedule: values.schedule }),
        ...(Object.keys(metadata).length === 0 ? {} : { metadata }),
      };
      let source: NewSource;
      if (type === 'web') {
        const startUrls = values['start-url'] ?? [];
        if (startUrls.length === 0 && values.sitemap === undefined) {
          throw new UsageError('sources add web needs --start-url or --sitemap (or both)');
        }
        const maxPages = wholeNumber(values['max-pages'], '--max-pages', 1, 10_000);
        const maxDepth = wholeNumber(values['max-depth'], '--max-depth', 0, 50);
        if (maxPages === undefined || maxDepth === undefined) {
          throw new UsageError('sources add web needs --max-pages and --max-depth');
        }
        source = {
          type: 'web',
          ...common,
          config: {
            start_urls: startUrls,
            ...(values.sitemap === undefined ? {} : { sitemap: values.sitemap }),
            ...(values.include === undefined ? {} : { include: values.include }),
            ...(values.exclude === undefined ? {} : { exclude: values.exclude }),
            max_pages: maxPages,
            max_depth: maxDepth,
            ...(values['any-host'] ? { same_host: false } : {}),
          },
        };
      } else {
        if (values.bucket === undefined) throw new UsageError('sources add s3 needs --name and --bucket');
        let credentials = {};
        if (values['aws-env']) {
          const id = env.AWS_ACCESS_KEY_ID;
          const secret = env.AWS_SECRET_ACCESS_KEY;
          if (!id || !secret)
            throw new UsageError('--aws-env needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set');
          credentials = { access_key_id: id, secret_access_key: secret };
        }
        source = {
          type: 's3',
          ...common,
          config: {
            bucket: values.bucket,
            ...(values.prefix === undefined ? {} : { prefix: values.prefix }),
            ...(values.region === undefined ? {} : { region: values.region }),
            ...(values.endpoint === undefined ? {} : { endpoint: values.endpoint }),
            ...(values['path-style'] ? { force_path_style: true } : {}),
            ...credentials,
          },
        };
      }
      const created = await connect(values, env).createSource(source);
      io.stdout.write(values.json ? `${JSON.stringify(created)}\n` : renderSources([created]));
      return 0;
    }
    case 'list':
    case 'ls': {
      const { values, positionals } = parseClientArguments(rest, { json: { type: 'boolean' } });
      if (positionals.length > 0) throw new UsageError('sources list takes no arguments');
      const sources = await connect(values, env).listSources();
      if (values.json) io.stdout.write(`${JSON.stringify({ sources })}\n`);
      else if (sources.length === 0) io.stderr.write('no sources: try `docindex sources add s3 …`\n');
      else io.stdout.write(renderSources(sources));
      return 0;
    }
    case 'sync': {
      const { values, positionals } = parseClientArguments(rest, {
        wait: { type: 'boolean' },
        json: { type: 'boolean' },
      });
      if (positionals.length !== 1) throw new UsageError('sources sync needs one source id');
      const id = positionals[0]!;
      const client = connect(values, env);
      const runId = await client.syncSource(id);
      if (!values.wait) {
        io.stdout.write(values.json ? `${JSON.stringify({ run_id: runId })}\n` : `queued ${runId}\n`);
        return 0;
      }
      for (;;) {
        const run = (await client.listSourceRuns(id, { limit: 100 })).find((r) => r.run_id === runId);
        if (run && (run.status === 'completed' || run.status === 'failed')) {
          io.stdout.write(values.json ? `${JSON.stringify(run)}\n` : renderRuns([run]));
          return run.status === 'completed' ? 0 : 1;
        }
        await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
      }
    }
    case 'runs': {
      const { values, positionals } = parseClientArguments(rest, {
        limit: { type: 'string' },
        json: { type: 'boolean' },
      });
      if (positionals.length !== 1) throw new UsageError('sources runs needs one source id');
      const limit = wholeNumber(values.limit, '--limit', 1, 100) ?? 20;
      const runs = await connect(values, env).listSourceRuns(positionals[0]!, { limit });
      if (values.json) io.stdout.write(`${JSON.stringify({ runs })}\n`);
      else if (runs.length === 0) io.stderr.write('no runs yet: try `docindex sources sync <id>`\n');
      else io.stdout.write(renderRuns(runs));
      return 0;
    }
    case 'rm': {
      const { values, positionals } = parseClientArguments(rest, {});
      if (positionals.length === 0) throw new UsageError('sources rm needs at least one source id');
      const client = connect(values, env);
      for (const id of positionals) {
        await client.deleteSource(id);
        io.stderr.write(`deleted ${id}; its documents are being removed\n`);
      }
      return 0;
    }
    default:
      throw new UsageError(
        sub === undefined
          ? 'sources needs a subcommand: add, list, sync, runs or rm'
          : `unknown sources subcommand ${JSON.stringify(sub)} (add, list, sync, runs, rm)`,
      );
  }
}
