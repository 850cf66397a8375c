// Runs the examples of README.md and docs/*.md against a real server, as a reader would: a fresh
// embedded `docindex serve` (dist/, so build first) on a free port of 127.0.0.1, the key it prints
// on first start, and every code block in a language this file runs (sh, ts, js, python), in page
// order. A block that cannot run here (it needs a provider, Docker, a download, or it would run
// the test suite) says so in its info string (```sh no-test); any other block runs, so a new
// example is tested by default. Where a page shows the answer after a command
// (`# → 202 {"status":"accepted",…}`), the real answer must have that status and that shape.
//
// The server has an ADMIN_TOKEN, in the blocks' environment as DOCINDEX_ADMIN_TOKEN.
// What is replaced before a block runs: http://127.0.0.1:8080 (the server's address), dix_… (the
// key), `npx docindex` (the built command), https://example.com/ (a loopback origin serving a PDF
// for any `.pdf` path, as no test reaches past 127.0.0.1), and <document_id> (the last id an
// earlier example's ingest answered). Queries wait until nothing is queued or processing, as a
// reader reading the previous answer would.
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, type ServerProcess, startServer, stopServer } from '../helpers/process.js';
import { parseShownAnswer, type ShownAnswer, shapeMismatches } from './answers.js';
import { type CodeBlock, codeBlocks, documentationFiles, ROOT, readDoc } from './markdown.js';

const SHELL = new Set(['sh', 'bash', 'shell']);
const SCRIPT = new Set(['ts', 'typescript', 'js', 'javascript']);
const PYTHON = new Set(['python', 'py']);
/** Blocks that show data or output, never commands. */
const DATA = new Set(['json', 'text', 'yaml', 'toml']);
const NO_TEST = 'no-test';

const PDF = path.join(ROOT, 'test/fixtures/extract/hyphenation.pdf');
/** The server's ADMIN_TOKEN, which examples of the admin API read as DOCINDEX_ADMIN_TOKEN. */
const ADMIN_TOKEN = 'docs-example-admin-token-0123456789abcdef';

interface Example extends CodeBlock {
  file: string;
}

const examples: Example[] = documentationFiles().flatMap((file) =>
  codeBlocks(readDoc(file)).map((block) => ({ ...block, file })),
);
const runnable = examples.filter(
  (block) =>
    !block.flags.includes(NO_TEST) &&
    (SHELL.has(block.lang) || SCRIPT.has(block.lang) || PYTHON.has(block.lang)),
);

interface Step {
  command: string;
  shown?: ShownAnswer;
}

/** A shell block as commands (continuation lines joined), each with the answer shown after it. */
function shellSteps(code: string): Step[] {
  const steps: Step[] = [];
  let pending = '';
  for (const line of code.split('\n')) {
    if (pending === '' && line.trim().startsWith('#')) {
      const shown = parseShownAnswer(line);
      const last = steps.at(-1);
      if (shown && last) last.shown = shown;
      continue;
    }
    if (pending === '' && line.trim() === '') continue;
    pending += `${line}\n`;
    if (!line.endsWith('\\')) {
      steps.push({ command: pending.trimEnd() });
      pending = '';
    }
  }
  return steps;
}

const SHELL_PRELUDE = readFileSync(path.join(ROOT, 'test/docs/example-prelude.sh'), 'utf8');

describe('the examples of the documentation', () => {
  let tmp: string;
  let work: string;
  let project: string;
  let state: string;
  let server: ServerProcess;
  let origin: Server;
  let originUrl: string;
  let key: string;

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'docindex-docs-'));
    // The reader's folder: the files the examples name.
    work = path.join(tmp, 'work');
    mkdirSync(path.join(work, 'papers'), { recursive: true });
    copyFileSync(PDF, path.join(work, 'handbook.pdf'));
    copyFileSync(
      path.join(ROOT, 'test/fixtures/extract/pandoc-notes.docx'),
      path.join(work, 'papers/notes.docx'),
    );
    writeFileSync(
      path.join(work, 'papers/salmon.md'),
      '# Salmon\n\nHow do salmon find their river? By smell.\n',
    );
    // A project of the reader's own, with the package installed as `npm install /path/to/docindex`
    // installs it: a link to the clone.
    project = path.join(tmp, 'project');
    mkdirSync(path.join(project, 'node_modules'), { recursive: true });
    writeFileSync(path.join(project, 'package.json'), '{"type": "module", "private": true}\n');
    symlinkSync(ROOT, path.join(project, 'node_modules/docindex'), 'dir');
    state = path.join(tmp, 'state');
    mkdirSync(state);

    origin = createServer((req, res) => {
      if (req.url?.endsWith('.pdf')) {
        res.writeHead(200, { 'content-type': 'application/pdf' }).end(readFileSync(PDF));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/`;

    server = await startServer(['serve'], {
      DATA_DIR: path.join(tmp, 'data'),
      URL_FETCH_ALLOW: '127.0.0.1',
      ADMIN_TOKEN,
    });
    key = /api_key:\s+(\S+)/.exec(server.stdout())![1]!;
  }, 60_000);

  afterAll(async () => {
    if (server) await stopServer(server);
    if (origin) await new Promise((resolve) => origin.close(resolve));
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** The substitutions every block gets. */
  function localise(code: string): string {
    return code
      .replaceAll('http://127.0.0.1:8080', server.baseUrl)
      .replaceAll('127.0.0.1:8080', server.baseUrl.replace('http://', ''))
      .replaceAll('dix_…', key)
      .replaceAll('https://example.com/', originUrl)
      .replace(/\bnpx docindex\b/g, `node ${JSON.stringify(BIN)}`);
  }

  function env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      DOCINDEX_URL: server.baseUrl,
      DOCINDEX_API_KEY: key,
      KEY: key,
      DOCINDEX_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
    };
  }

  /** Runs a command in the reader's folder; never blocks the event loop (the test's own RPC). */
  function run(
    command: string,
    args: string[],
    options: { env?: NodeJS.ProcessEnv } = {},
  ): Promise<{ status: number | null; output: string }> {
    const child = spawn(command, args, {
      cwd: work,
      env: options.env ?? env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    return new Promise((resolve) => {
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, output });
      });
    });
  }

  it('gives every code block a language, so none is skipped by accident', () => {
    const unknown = examples
      .filter((block) => !block.flags.includes(NO_TEST))
      .filter((block) => ![SHELL, SCRIPT, PYTHON, DATA].some((set) => set.has(block.lang)))
      .map((block) => `${block.file}:${block.line} (${JSON.stringify(block.lang)})`);
    expect(unknown).toEqual([]);
    expect(runnable.length).toBeGreaterThan(10);
  });

  for (const [index, block] of runnable.entries()) {
    const name = `${block.file}:${block.line} (${block.lang})`;
    it(name, async () => {
      if (SHELL.has(block.lang)) await runShell(index, block);
      else if (SCRIPT.has(block.lang)) await runScript(index, block);
      else await runPython(index, block);
    }, 120_000);
  }

  async function runShell(index: number, block: Example): Promise<void> {
    const steps = shellSteps(block.code);
    const dir = path.join(state, String(index));
    mkdirSync(dir);
    const lines = steps.map((step, n) => {
      let command = localise(step.command)
        .replace(/\bcurl\s/g, `__curl ${n} `)
        .replaceAll('<document_id>', '$(cat "$__STATE/last-document-id")');
      if (/\/v1\/query|docindex\.js"? query|"name":"search"/.test(command)) command = `__settle; ${command}`;
      return command;
    });
    const script = `${SHELL_PRELUDE}\n${lines.join('\n')}\n`;
    const result = await run('bash', ['-c', script], { env: { ...env(), __STEPS: dir, __STATE: state } });
    expect(result.status, `${name(block)} failed:\n${result.output}`).toBe(0);

    steps.forEach((step, n) => {
      let status: number;
      let body: string;
      try {
        status = Number(readFileSync(path.join(dir, `${n}.status`), 'utf8'));
        body = readFileSync(path.join(dir, `${n}.body`), 'utf8');
      } catch {
        expect(
          step.shown,
          `${name(block)}: an answer is shown after a command that made no request`,
        ).toBeUndefined();
        return;
      }
      const context = `${name(block)}, \`${step.command.split('\n')[0]}\` answered ${status} ${body}`;
      if (!step.shown) {
        expect(status, context).toBeLessThan(400);
        return;
      }
      expect(status, context).toBe(step.shown.status);
      if (step.shown.body !== undefined) {
        expect(shapeMismatches(step.shown.body, JSON.parse(body)), context).toEqual([]);
      }
    });
  }

  async function runScript(index: number, block: Example): Promise<void> {
    const js = ts.transpileModule(localise(block.code), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    // In the reader's project, so that `import … from 'docindex'` resolves as it would there.
    const file = path.join(project, `example-${index}.mjs`);
    writeFileSync(file, js);
    const result = await run(process.execPath, [file]);
    expect(result.status, `${name(block)} failed:\n${result.output}`).toBe(0);
  }

  async function runPython(index: number, block: Example): Promise<void> {
    const python = spawnSync('python3', ['--version'], { encoding: 'utf8' });
    if (python.error) {
      console.warn(`${name(block)} skipped: python3 is not installed`);
      return;
    }
    const file = path.join(work, `example-${index}.py`);
    writeFileSync(file, localise(block.code));
    const result = await run('python3', [file], {
      env: { ...env(), PYTHONPATH: path.join(ROOT, 'clients/python') },
    });
    expect(result.status, `${name(block)} failed:\n${result.output}`).toBe(0);
  }
});

function name(block: Example): string {
  return `${block.file}:${block.line}`;
}
