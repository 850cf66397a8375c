// `docindex webhooks create|ls|rm|test|deliveries`: an org's webhook endpoints over HTTP with
// DocindexClient. `--json` prints the API's JSON body as it is.
import type { Webhook, WebhookEvent } from '../../client/types.js';
import { WEBHOOK_EVENTS } from '../../domain/webhooks.js';
import { UsageError, wholeNumber } from '../args.js';
import { renderTable, type TerminalIO } from '../render.js';
import { connect, type Env, parseClientArguments } from './shared.js';

export const WEBHOOKS_USAGE = `  docindex webhooks create <url> [--event E …] [--description TEXT] [--json]
                                   register an endpoint; prints its signing secret (shown once)
                                   events: ${WEBHOOK_EVENTS.join(', ')} (all by default)
  docindex webhooks ls [--json]    the org's endpoints
  docindex webhooks rm <id…>       delete endpoints (their waiting messages and log too)
  docindex webhooks test <id>      send a signed webhook.test event
  docindex webhooks deliveries <id> [--limit N] [--json]
                                   the newest delivery attempts: status, duration, error`;

function renderWebhooks(hooks: Webhook[]): string {
  return renderTable([
    ['ID', 'URL', 'EVENTS', 'STATE'],
    ...hooks.map((h) => [
      h.id,
      h.url,
      h.events.length === WEBHOOK_EVENTS.length ? 'all' : h.events.join(','),
      h.enabled ? 'enabled' : `disabled (${h.disabled_reason})`,
    ]),
  ]);
}

export async function webhooksCommand(args: string[], env: Env, io: TerminalIO): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values, positionals } = parseClientArguments(rest, {
        event: { type: 'string', multiple: true },
        description: { type: 'string' },
        json: { type: 'boolean' },
      });
      if (positionals.length !== 1) throw new UsageError('webhooks create needs one URL');
      const events = values.event ?? [];
      for (const event of events) {
        if (!(WEBHOOK_EVENTS as readonly string[]).includes(event)) {
          throw new UsageError(`--event must be one of ${WEBHOOK_EVENTS.join(', ')}`);
        }
      }
      const created = await connect(values, env).createWebhook(positionals[0]!, {
        ...(events.length === 0 ? {} : { events: events as WebhookEvent[] }),
        ...(values.description === undefined ? {} : { description: values.description }),
      });
      if (values.json) {
        io.stdout.write(`${JSON.stringify(created)}\n`);
      } else {
        io.stdout.write(renderWebhooks([created]));
        io.stdout.write(`secret: ${created.secret}\n`);
        io.stderr.write('The secret is shown once: keep it to verify webhook-signature.\n');
      }
      return 0;
    }
    case 'ls': {
      const { values, positionals } = parseClientArguments(rest, { json: { type: 'boolean' } });
      if (positionals.length > 0) throw new UsageError('webhooks ls takes no arguments');
      const hooks = await connect(values, env).listWebhooks();
      if (values.json) io.stdout.write(`${JSON.stringify({ webhooks: hooks })}\n`);
      else if (hooks.length === 0)
        io.stderr.write('no webhook endpoints: try `docindex webhooks create <url>`\n');
      else io.stdout.write(renderWebhooks(hooks));
      return 0;
    }
    case 'rm': {
      const { values, positionals } = parseClientArguments(rest, {});
      if (positionals.length === 0) throw new UsageError('webhooks rm needs at least one endpoint id');
      const client = connect(values, env);
      for (const id of positionals) {
        await client.deleteWebhook(id);
        io.stderr.write(`deleted ${id}\n`);
      }
      return 0;
    }
    case 'test': {
      const { values, positionals } = parseClientArguments(rest, { json: { type: 'boolean' } });
      if (positionals.length !== 1) throw new UsageError('webhooks test needs one endpoint id');
      const messageId = await connect(values, env).testWebhook(positionals[0]!);
      io.stdout.write(
        values.json ? `${JSON.stringify({ message_id: messageId })}\n` : `queued ${messageId}\n`,
      );
      return 0;
    }
    case 'deliveries': {
      const { values, positionals } = parseClientArguments(rest, {
        limit: { type: 'string' },
        json: { type: 'boolean' },
      });
      if (positionals.length !== 1) throw new UsageError('webhooks deliveries needs one endpoint id');
      const limit = wholeNumber(values.limit, '--limit', 1, 100) ?? 20;
      const log = await connect(values, env).listWebhookDeliveries(positionals[0]!, { limit });
      if (values.json) {
        io.stdout.write(`${JSON.stringify(log)}\n`);
        return 0;
      }
      if (log.deliveries.length > 0) {
        io.stdout.write(
          renderTable([
            ['TIME', 'EVENT', 'MESSAGE', 'ATTEMPT', 'STATUS', 'MS', 'OUTCOME', 'ERROR'],
            ...log.deliveries.map((d) => [
              d.created_at,
              d.event_type,
              d.message_id,
              String(d.attempt),
              d.status_code === null ? '-' : String(d.status_code),
              String(d.duration_ms),
              d.outcome,
              d.error ?? '',
            ]),
          ]),
        );
      } else {
        io.stderr.write('no delivery attempts yet\n');
      }
      io.stderr.write(`${log.pending} message(s) waiting\n`);
      return 0;
    }
    default:
      throw new UsageError('webhooks needs a subcommand: create, ls, rm, test or deliveries');
  }
}
