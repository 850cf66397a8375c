// The repository speaks of what the code is and why, never of when or in which round of work it
// was written: no labels of work periods, no numbered tickets, no citations of a
// design document that is not in the repository. History lives in git log; bench/RESULTS.md keeps
// current figures and a table of the changes that moved them. Every file git knows of (tracked, or
// new and not ignored) is read, so a page or a source file added later is checked too.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/process.js';

// The examples below are put together from these, so that this file holds none of the phrases
// it forbids.
const SESSION = ['sess', 'ion'].join('');
const ISSUE = ['iss', 'ue'].join('');
const DESIGN = ['DES', 'IGN'].join('');

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const THIS_FILE = path
  .relative(ROOT, fileURLToPath(import.meta.url))
  .split(path.sep)
  .join('/');

const ORDINALS =
  'first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|' +
  'fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|\\d+(?:st|nd|rd|th)';

interface Rule {
  name: string;
  pattern: RegExp;
  /** Phrases of the kind the rule is after, which it must catch. */
  catches: string[];
  /** Phrases that merely look alike (MCP and HTTP sessions, rounds of a benchmark). */
  spares: string[];
}

const RULES: Rule[] = [
  {
    name: 'a work period',
    pattern: new RegExp(
      `\\b(?:${ORDINALS}|this|last|previous|next|earlier|later) (?:work )?(?:session|sprint|work period)s?\\b|\\bsessions? \\d+\\b`,
      'i',
    ),
    catches: [
      `Ninth ${SESSION} (2026-11-27)`,
      `measured this ${SESSION}`,
      `the twelfth ${SESSION}`,
      `in ${SESSION} 9`,
    ],
    spares: [
      'no session id',
      'a session lock on a dedicated connection',
      'an ONNX session',
      'sessionStorage',
    ],
  },
  {
    name: 'a numbered round of work',
    pattern: new RegExp(`\\b(?:${ORDINALS.replace('first|', '')}) round\\b`, 'i'),
    catches: ['the formats of the second round', 'a third round of hardening'],
    spares: ['in the order A’s first round gave them', 'B runs second in round 1'],
  },
  {
    name: 'an issue',
    pattern: /\bissues? #?\d|\bissue ["“'‘]|["”'’] issue\b|\b[A-Z][a-z]+ issue\b|\(issues? [A-Z0-9]/,
    catches: [
      `Goal (${ISSUE} 16)`,
      `${ISSUE}s 15, 16`,
      `${ISSUE} #3`,
      `${ISSUE} "Hardening"`,
      `(Architecture ${ISSUE})`,
    ],
    spares: ['issue a key with that scope', 'issues, lists and revokes keys', 'Issue an API key'],
  },
  {
    name: 'the design document',
    pattern: /\bDESIGN\b/,
    catches: [`the rules of ${DESIGN} §5`, `(${DESIGN}: \`orgs create --json\`)`],
    spares: ['each design change is measured', 'Design measurements'],
  },
  {
    name: 'the results history',
    pattern:
      /RESULTS\.md[^\n]{0,40}\b(?:history|Before and after|Design measurements)\b|\bhistory of \d{4}-\d\d-\d\d/,
    catches: ['(bench/RESULTS.md, history of 2026-11-26)', 'bench/RESULTS.md, "Before and after"'],
    spares: ['bench/RESULTS.md, section 4', 'git history of the file'],
  },
];

/**
 * Hits judged and kept, as "file: text of the hit". Empty while no hit needs keeping; an entry
 * says why beside it.
 */
const ALLOWED: string[] = [];

async function repositoryFiles(): Promise<string[]> {
  const listed = await runCommand('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
  });
  if (listed.status !== 0) throw new Error(`git ls-files: ${listed.stderr}`);
  return listed.stdout
    .split('\n')
    .filter((file) => file !== '' && file !== THIS_FILE)
    .filter((file) => !/^(LICENSE|package-lock\.json)$/.test(file) && !file.startsWith('node_modules'));
}

function textOf(file: string): string | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path.join(ROOT, file));
  } catch {
    return null; // listed by git but deleted in the working tree
  }
  return bytes.includes(0) ? null : bytes.toString('utf8');
}

describe('no development diary in the repository', () => {
  for (const rule of RULES) {
    it(`the rule for ${rule.name} catches what it is for and spares look-alikes`, () => {
      expect(rule.catches.filter((text) => !rule.pattern.test(text))).toEqual([]);
      expect(rule.spares.filter((text) => rule.pattern.test(text))).toEqual([]);
    });
  }

  it('no file names a work period, an issue number, the design document or the results history', async () => {
    const files = await repositoryFiles();
    expect(files.length).toBeGreaterThan(400);
    const hits: string[] = [];
    for (const file of files) {
      const text = textOf(file);
      if (text === null) continue;
      text.split('\n').forEach((line, index) => {
        for (const rule of RULES) {
          const match = rule.pattern.exec(line);
          if (match === null || ALLOWED.includes(`${file}: ${match[0]}`)) continue;
          hits.push(`${file}:${index + 1}: ${rule.name}: "${match[0]}" in ${line.trim().slice(0, 120)}`);
        }
      });
    }
    expect(hits).toEqual([]);
  });
});
