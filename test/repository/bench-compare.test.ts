// `npm run bench:compare -- A B section`: two commits built in worktrees of their own, their
// benchmark run alternately, every table figure compared. Tried on a small repository of its own
// whose "benchmark" reports a figure the commit decides.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { compare, readFigures, readSections } from '../../scripts/bench-figures.js';
import { runCommand } from '../helpers/process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('figures read from a results section', () => {
  it('names each numeric cell by row and column, reads thousands and emphasis, skips text', () => {
    const text = [
      'Some words 12 that are not a table.',
      '',
      '| size | docs/s | p99 | note |',
      '|---|---:|---|---|',
      '| 10 KB | 1,234.5 | **16 ms** | fine |',
      '| 1 MB | 0.38× | — | |',
      '',
      '| size | docs/s |',
      '|:--|--:|',
      '| 10 KB | 7 |',
    ].join('\n');
    expect(readFigures(text)).toEqual([
      { name: '10 KB · docs/s', value: 1234.5 },
      { name: '10 KB · p99', value: 16 },
      { name: '1 MB · docs/s', value: 0.38 },
      { name: '10 KB · docs/s (2)', value: 7 },
    ]);
  });

  it('names a row by all its leading text cells, numbers in them included', () => {
    const text = [
      '| setting | idle server | median MiB | min–max MiB |',
      '|---|---|---:|---|',
      '| threads kept | no documents | 204.4 | 199.7–220.6 |',
      '| threads kept | after 100 documents | 208.2 | 204.2–228.0 |',
    ].join('\n');
    expect(readFigures(text)).toEqual([
      { name: 'threads kept · no documents · median MiB', value: 204.4 },
      { name: 'threads kept · no documents · min–max MiB', value: 199.7 },
      { name: 'threads kept · after 100 documents · median MiB', value: 208.2 },
      { name: 'threads kept · after 100 documents · min–max MiB', value: 204.2 },
    ]);
  });

  it('splits a results file by its section markers', () => {
    const sections = readSections('# head\n<!-- bench:one -->\n## 1. One\n| a | b |\n<!-- bench:two -->\nx');
    expect([...sections.keys()]).toEqual(['one', 'two']);
    expect(sections.get('one')).toContain('## 1. One');
  });

  it('pairs runs of the same round for the spread, and skips figures one side lacks', () => {
    const rounds = (...values: Array<number | undefined>) =>
      values.map((v) => new Map(v === undefined ? [] : [['f', v]]));
    const [row, ...rest] = compare(rounds(100, 100, 100), rounds(150, 300, undefined));
    expect(rest).toEqual([]);
    expect(row).toMatchObject({ medianA: 100, medianB: 225, ratio: 2.25, spread: [1.5, 3], pairs: 2 });
    expect(compare([new Map([['only A', 1]])], [new Map([['only B', 1]])])).toEqual([]);
  });
});

describe('two commits compared end to end', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-compare-'));
  const work = path.join(dir, 'worktrees');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const repo = path.join(dir, 'repo');
  const git = async (...args: string[]) => {
    const run = await runCommand('git', args, {
      cwd: repo,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    });
    if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
    return run.stdout.trim();
  };
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), text);
  };
  // The "benchmark": a figure from the commit's value.txt, grown by a step on each run of the same
  // worktree, and whether the shared folder this test puts beside the fake checkout is beside the
  // worktree too (1); the build copies it into dist/ as the real build does.
  const benchmark = `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
const base = Number(readFileSync('value.txt', 'utf8'));
const step = Number(readFileSync('step.txt', 'utf8'));
const count = existsSync('runs.txt') ? Number(readFileSync('runs.txt', 'utf8')) : 0;
writeFileSync('runs.txt', String(count + 1));
const id = process.argv[2];
const corpus = existsSync(path.join('..', 'shared', 'corpus.txt')) ? 1 : 0;
const body = id === 'fake' ? ['| case | ms |', '|---|---:|', '| small | ' + (base + step * count) + ' |', '| corpus | ' + corpus + ' |'] : ['- failed: boom'];
writeFileSync('bench/RESULTS.md', ['# Benchmark results', '<!-- bench:' + id + ' -->', '## 1. Fake', '', ...body, ''].join('\\n'));
`;

  it('builds both, alternates, and prints medians, the ratio and the paired spread', async () => {
    mkdirSync(repo);
    mkdirSync(path.join(dir, 'shared'));
    writeFileSync(path.join(dir, 'shared', 'corpus.txt'), 'the corpus beside the checkout');
    await git('init', '-q', '-b', 'main');
    write(
      'package.json',
      JSON.stringify({ name: 'fake', private: true, scripts: { build: 'node build.mjs' } }),
    );
    write(
      'build.mjs',
      "import { cpSync, mkdirSync } from 'node:fs';\nmkdirSync('dist/bench', { recursive: true });\ncpSync('run.mjs', 'dist/bench/run.js');\n",
    );
    write('run.mjs', benchmark);
    write('bench/RESULTS.md', '# Benchmark results\n');
    write('value.txt', '100');
    write('step.txt', '0');
    await git('add', '.');
    await git('commit', '-q', '-m', 'a');
    const a = await git('rev-parse', 'HEAD');
    write('value.txt', '150');
    write('step.txt', '70');
    await git('commit', '-q', '-am', 'b');

    const compareScript = path.join(ROOT, 'dist', 'scripts', 'bench-compare.js');
    expect(existsSync(compareScript), 'run `npm run build` first').toBe(true);
    const run = await runCommand(
      process.execPath,
      [compareScript, a, 'HEAD', 'fake', '--rounds', '2', '--work', work],
      { cwd: repo, timeoutMs: 120_000 },
    );
    expect(run.stderr).toContain('round 2/2');
    expect(run.status).toBe(0);
    // A gives 100 twice; B gives 150 then 220; B runs second in round 1 and first in round 2.
    expect(run.stdout).toContain('| small · ms | 100 | 185 | 1.850× | 1.500×–2.200× | 2 |');
    expect(run.stdout).toContain('| corpus · ms | 1.00 | 1.00 | 1.000× | 1.000×–1.000× | 2 |');
    expect(run.stdout).toMatch(/\| run · wall time, s \| [\d.]+ \| [\d.]+ \|/);
    expect(run.stdout).toContain(`A ${a} (${a.slice(0, 12)}) vs B HEAD`);

    const failing = await runCommand(
      process.execPath,
      [compareScript, a, 'HEAD', 'other', '--rounds', '1', '--work', work],
      { cwd: repo, timeoutMs: 120_000 },
    );
    expect(failing.status).toBe(1);
    expect(failing.stdout).toContain('round 1, A: other: failed: boom');
  });

  it('refuses what is not a commit, with its usage', async () => {
    const run = await runCommand(
      process.execPath,
      [path.join(ROOT, 'dist', 'scripts', 'bench-compare.js'), 'nope', 'HEAD'],
      { cwd: repo, timeoutMs: 120_000 },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('A: nope is not a commit of');
    expect(run.stderr).toContain('usage: npm run bench:compare');
  });
});
