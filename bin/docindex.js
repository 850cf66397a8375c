#!/usr/bin/env node
// Entry point of the `docindex` command: runs the compiled CLI (npm install builds it).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/src/start/cli.js', import.meta.url));
if (!existsSync(cli)) {
  process.stderr.write(
    'docindex is not built yet: run `npm install` (or `npm run build`) in the repository first.\n',
  );
  process.exit(1);
}
const { main } = await import(cli);
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`docindex: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
