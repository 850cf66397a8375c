// `docindex cat` and `docindex chunks`: what a ready document was indexed as (its text, its chunks)
// and, with `cat --original`, the file it came from.
import { writeFile } from 'node:fs/promises';
import type { ChunkPage } from '../../client/types.js';
import { UsageError } from '../args.js';
import type { TerminalIO } from '../render.js';
import { connect, type Env, parseClientArguments } from './shared.js';

/** A document's extracted text, or with --original its original file (to --output or stdout). */
export async function catCommand(args: string[], env: Env, io: TerminalIO) {
  const { values, positionals } = parseClientArguments(args, {
    original: { type: 'boolean' },
    output: { type: 'string', short: 'o' },
  });
  if (positionals.length !== 1) throw new UsageError('cat needs exactly one document id');
  if (values.output !== undefined && !values.original) {
    throw new UsageError('--output goes with --original (the text goes to stdout: redirect it)');
  }
  const client = connect(values, env);
  if (!values.original) {
    io.stdout.write(await client.getDocumentContent(positionals[0]!));
    return 0;
  }
  const file = await client.getDocumentFile(positionals[0]!);
  if (values.output === undefined) {
    io.stdout.write(file.data);
    return 0;
  }
  await writeFile(values.output, file.data);
  io.stderr.write(
    `${file.filename ?? positionals[0]} (${file.contentType}, ${file.data.length} bytes) → ${values.output}\n`,
  );
  return 0;
}

/** Every chunk of one ready document, following the cursor (`--json`: the array the API pages). */
export async function chunksCommand(args: string[], env: Env, io: TerminalIO) {
  const { values, positionals } = parseClientArguments(args, { json: { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('chunks needs exactly one document id');
  const client = connect(values, env);
  const chunks: ChunkPage['chunks'] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listChunks(positionals[0]!, { limit: 100, ...(cursor ? { cursor } : {}) });
    chunks.push(...page.chunks);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  if (values.json) {
    io.stdout.write(`${JSON.stringify(chunks, null, 2)}\n`);
    return 0;
  }
  for (const chunk of chunks) {
    const pages =
      chunk.page_start === null
        ? ''
        : chunk.page_start === chunk.page_end
          ? `, page ${chunk.page_start}`
          : `, pages ${chunk.page_start}–${chunk.page_end}`;
    io.stdout.write(`── chunk ${chunk.index} (${chunk.token_count} tokens${pages})\n${chunk.text}\n`);
  }
  return 0;
}
