// `npm run bench:compare -- A B [section…]`: two commits' benchmarks side by side. Each commit is
// checked out and built in a worktree of its own; the sections then run alternately (A, B, then
// B, A, so a drift in the machine's load favours neither) for several rounds, and every figure of
// the sections' tables is printed with both medians, their ratio B/A and the spread of the ratios
// of runs of the same round. Beside the figures: each run's wall time and the CPU time of the
// benchmark process and every process it waited for (servers, threads), which a busy machine
// disturbs less than wall time.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compare, type Rounds, readFigures, readSections, renderComparison } from './bench-figures.js';

const USAGE = `usage: npm run bench:compare -- A B [section…] [--rounds N] [--quick] [--work DIR] [--out FILE]
  A, B       commits (any git revision: a sha, a branch, HEAD~3)
  section    bench/run.ts section ids (chunk, ingest, accept, …), each run as its own process;
             none: one process running every default section (hours per run)
  --rounds   runs of each commit, alternating (default 5)
  --quick    the sections' reduced sizes (a smoke run of the comparison itself)
  --work     where the worktrees are kept between runs (default: $TMPDIR/docindex-bench-compare)
  --out      also write the comparison (markdown) to FILE`;

class UsageError extends Error {}

interface Side {
  label: 'A' | 'B';
  revision: string;
  sha: string;
  dir: string;
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function log(line: string): void {
  process.stderr.write(`bench:compare: ${line}\n`);
}

/** Runs a command with its output into `logFile`; rejects with the log's last lines on failure. */
function run(
  command: string,
  args: string[],
  cwd: string,
  logFile: string,
  env = process.env,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(logFile, { flags: 'a' });
    out.write(`$ ${command} ${args.join(' ')}\n`);
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on('error', (error) => out.end(() => reject(error)));
    child.on('close', (code, signal) => {
      out.end(() => {
        if (code === 0) return resolve();
        const tail = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
        reject(
          new Error(
            `${command} ${args.join(' ')} in ${cwd} ended with ${signal ?? `exit ${code}`}:\n${tail}`,
          ),
        );
      });
    });
  });
}

/** CPU seconds of the children this process has waited for (Linux), or null elsewhere. */
function childCpuSeconds(ticksPerSecond: number): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: field 3 (state) is index 0, so cutime (16) and cstime (17) are 13, 14.
    return (Number(fields[13]) + Number(fields[14])) / ticksPerSecond;
  } catch {
    return null;
  }
}

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

function sha256(file: string): string | null {
  return existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : null;
}

/**
 * The worktree's node_modules: when its lock file is the checkout's own, links to the checkout's
 * packages (the worktree's build can then re-link its own `.bin/docindex` without touching the
 * checkout's); otherwise a fresh install of its lock file.
 */
async function installPackages(repo: string, side: Side, logFile: string): Promise<void> {
  const target = path.join(side.dir, 'node_modules');
  if (existsSync(target)) return;
  const lock = sha256(path.join(side.dir, 'package-lock.json'));
  const source = path.join(repo, 'node_modules');
  if (lock !== null && lock === sha256(path.join(repo, 'package-lock.json')) && existsSync(source)) {
    mkdirSync(path.join(target, '.bin'), { recursive: true });
    for (const entry of readdirSync(source)) {
      if (entry !== '.bin') symlinkSync(path.join(source, entry), path.join(target, entry));
    }
    const bin = path.join(source, '.bin');
    if (existsSync(bin)) {
      for (const entry of readdirSync(bin))
        symlinkSync(readlinkSync(path.join(bin, entry)), path.join(target, '.bin', entry));
    }
    return;
  }
  if (lock === null) return;
  log(
    `${side.label}: installing ${side.sha.slice(0, 12)}'s packages (its lock file differs from this checkout's)`,
  );
  await run('npm', ['install', '--no-audit', '--no-fund'], side.dir, logFile, {
    ...process.env,
    ONNXRUNTIME_NODE_INSTALL: 'skip',
  });
}

async function prepare(repo: string, side: Side, logFile: string): Promise<void> {
  if (existsSync(side.dir)) {
    let head = '';
    try {
      head = git(side.dir, ['rev-parse', 'HEAD']);
    } catch {}
    if (head !== side.sha)
      throw new Error(`${side.dir} exists and is not a worktree at ${side.sha}; remove it`);
  } else {
    git(repo, ['worktree', 'prune']);
    git(repo, ['worktree', 'add', '--detach', side.dir, side.sha]);
  }
  await installPackages(repo, side, logFile);
  log(`${side.label}: building ${side.sha.slice(0, 12)} in ${side.dir}`);
  await run('npm', ['run', 'build'], side.dir, logFile);
}

interface RunResult {
  /** Figures by section id; the run's own wall and CPU time under the unit's label. */
  figures: Map<string, Map<string, number>>;
  failures: string[];
}

/**
 * One run of `node dist/bench/run.js` in a commit's worktree: the named section, or every default
 * section when `section` is null. The results file is removed first, so what it holds afterwards
 * is this run's alone.
 */
async function runUnit(
  side: Side,
  section: string | null,
  quick: boolean,
  logFile: string,
  ticks: number,
): Promise<RunResult> {
  const results = path.join(side.dir, 'bench', quick ? 'RESULTS.quick.md' : 'RESULTS.md');
  rmSync(results, { force: true });
  const cpuBefore = childCpuSeconds(ticks);
  const started = performance.now();
  const failures: string[] = [];
  try {
    await run(
      process.execPath,
      ['dist/bench/run.js', ...(quick ? ['--quick'] : []), ...(section === null ? [] : [section])],
      side.dir,
      logFile,
    );
  } catch (error) {
    failures.push(error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error));
  }
  const own = new Map<string, number>([['run · wall time, s', (performance.now() - started) / 1000]]);
  const cpuAfter = childCpuSeconds(ticks);
  if (cpuBefore !== null && cpuAfter !== null) own.set('run · CPU time, s', cpuAfter - cpuBefore);
  const figures = new Map<string, Map<string, number>>([[section ?? ALL, new Map()]]);
  const sections = existsSync(results)
    ? readSections(readFileSync(results, 'utf8'))
    : new Map<string, string>();
  if (section !== null && !sections.has(section) && failures.length === 0)
    failures.push(`section ${section} not in ${results}`);
  for (const [id, text] of sections) {
    const failed = text.split('\n').find((line) => line.startsWith('- failed:'));
    if (failed !== undefined) {
      failures.push(`${id}: ${failed.slice(2)}`);
      continue;
    }
    const found = figures.get(id) ?? new Map<string, number>();
    for (const figure of readFigures(text)) found.set(figure.name, figure.value);
    figures.set(id, found);
  }
  // A run that failed gives no times: they would pair a crash's seconds with a full run's.
  if (failures.length === 0) for (const [name, value] of own) figures.get(section ?? ALL)!.set(name, value);
  return { figures, failures };
}

/** The heading of the run's own times when every default section ran in one process. */
const ALL = 'all default sections';

function load(): string {
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');
}

/**
 * The benches read the corpus and the test collections from ../shared beside the project: the
 * worktrees, kept side by side in `work`, find the checkout's own through a link there.
 */
function linkSharedFolder(repo: string, work: string): void {
  const shared = path.join(repo, '..', 'shared');
  const link = path.join(work, 'shared');
  if (path.resolve(shared) === path.resolve(link) || !existsSync(shared) || existsSync(link)) return;
  // A link left dangling by a checkout that has moved is replaced.
  rmSync(link, { force: true });
  symlinkSync(shared, link, 'dir');
}

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      rounds: { type: 'string', default: '5' },
      quick: { type: 'boolean', default: false },
      work: { type: 'string', default: path.join(os.tmpdir(), 'docindex-bench-compare') },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (parsed.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [revisionA, revisionB, ...sections] = parsed.positionals;
  if (revisionA === undefined || revisionB === undefined) throw new UsageError('name two commits, A and B');
  const rounds = Number(parsed.values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100) {
    throw new UsageError(`--rounds must be a whole number from 1 to 100, not ${parsed.values.rounds}`);
  }
  const repo = git(process.cwd(), ['rev-parse', '--show-toplevel']);
  const work = path.resolve(parsed.values.work);
  mkdirSync(work, { recursive: true });
  linkSharedFolder(repo, work);
  const side = (label: 'A' | 'B', revision: string): Side => {
    let sha: string;
    try {
      sha = git(repo, ['rev-parse', '--verify', '--quiet', `${revision}^{commit}`]);
    } catch {
      throw new UsageError(`${label}: ${revision} is not a commit of ${repo}`);
    }
    return { label, revision, sha, dir: path.join(work, sha) };
  };
  const a = side('A', revisionA);
  const b = side('B', revisionB);
  const logFile = path.join(work, `compare-${Date.now()}.log`);
  const ticks = clockTicks();
  log(`log: ${logFile}`);
  const loadBefore = load();
  for (const s of a.sha === b.sha ? [a] : [a, b]) await prepare(repo, s, logFile);

  const units: Array<string | null> = sections.length > 0 ? sections : [null];
  const results = new Map<string, { A: Rounds; B: Rounds }>();
  const failures: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [a, b] : [b, a];
    for (const s of order) {
      for (const unit of units) {
        log(`round ${round + 1}/${rounds}: ${s.label} (${s.sha.slice(0, 12)}) ${unit ?? ALL}`);
        const result = await runUnit(s, unit, parsed.values.quick, logFile, ticks);
        for (const [id, figures] of result.figures) {
          const entry = results.get(id) ?? { A: [], B: [] };
          // Rounds stay aligned: a section missing from a run counts as a round without figures.
          while (entry[s.label].length < round) entry[s.label].push(new Map());
          entry[s.label].push(figures);
          results.set(id, entry);
        }
        failures.push(...result.failures.map((f) => `round ${round + 1}, ${s.label}: ${f}`));
      }
    }
  }

  const lines = [
    `# bench:compare — A ${a.revision} (${a.sha.slice(0, 12)}) vs B ${b.revision} (${b.sha.slice(0, 12)})`,
    '',
    `${rounds} round(s) each, alternating; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; Node ${process.version}; ${os.cpus().length} cores; load average (1/5/15 min) ${loadBefore} before, ${load()} after${parsed.values.quick ? '; --quick' : ''}.`,
    'B/A is the ratio of the medians; the spread is the smallest and largest B/A of runs of the same round.',
  ];
  for (const [section, entry] of results) {
    lines.push('', `## ${section}`, '', ...renderComparison(compare(entry.A, entry.B), 'A', 'B'));
  }
  if (failures.length > 0) lines.push('', '## Failed runs', '', ...failures.map((f) => `- ${f}`));
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  if (parsed.values.out !== undefined) writeFileSync(parsed.values.out, text);
  return failures.length > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error)) {
      process.stderr.write(`bench:compare: ${error.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`bench:compare: ${error instanceof Error ? error.message : error}\n`);
    process.exit(1);
  },
);
