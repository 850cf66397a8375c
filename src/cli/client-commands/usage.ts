// `docindex usage`: queries per day over 30 days, by partition, and the rate limit.
import { UsageError } from '../args.js';
import { renderUsage, type TerminalIO } from '../render.js';
import { connect, type Env, parseClientArguments } from './shared.js';

export async function usageCommand(args: string[], env: Env, io: TerminalIO) {
  const { values, positionals } = parseClientArguments(args, {
    json: { type: 'boolean' },
    partition: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError('usage takes no arguments');
  const report = await connect(values, env).usage(
    values.partition === undefined ? { byPartition: true } : { partition: values.partition },
  );
  io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : renderUsage(report));
  return 0;
}
