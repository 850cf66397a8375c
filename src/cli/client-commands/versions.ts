// `docindex update` and `docindex reprocess`: a new version of one document, from new content or
// from what it has (its text or original file) with other chunk settings.
import type { VersionAck } from '../../client/types.js';
import { UsageError } from '../args.js';
import type { TerminalIO } from '../render.js';
import { chunkOptions, connect, type Env, parseClientArguments } from './shared.js';

export async function updateCommand(args: string[], env: Env, io: TerminalIO) {
  const { values, positionals } = parseClientArguments(args, {
    text: { type: 'string' },
    file: { type: 'string' },
    url: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1) throw new UsageError('update needs exactly one document id');
  const given = (['text', 'file', 'url'] as const).filter((name) => values[name] !== undefined);
  if (given.length !== 1) throw new UsageError('update needs exactly one of --text, --file and --url');
  const client = connect(values, env);
  const content =
    values.text !== undefined
      ? { text: values.text }
      : values.file !== undefined
        ? { file: values.file }
        : { url: values.url as string };
  const ack = await client.replaceContent(positionals[0]!, content);
  return printVersionAck(ack, values.json === true, io);
}

export async function reprocessCommand(args: string[], env: Env, io: TerminalIO) {
  const { values, positionals } = parseClientArguments(args, {
    'chunk-size': { type: 'string' },
    'chunk-overlap': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1) throw new UsageError('reprocess needs exactly one document id');
  const chunks = chunkOptions(values);
  const client = connect(values, env);
  const ack = await client.reprocessDocument(positionals[0]!, chunks);
  return printVersionAck(ack, values.json === true, io);
}

function printVersionAck(ack: VersionAck, json: boolean, io: TerminalIO): number {
  io.stdout.write(
    json
      ? `${JSON.stringify(ack)}\n`
      : `${ack.document_id}: version ${ack.version} queued (the current version answers until it is ready)\n`,
  );
  return 0;
}
