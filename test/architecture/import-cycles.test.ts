// No import circles in src/: a module that is (through others) imported by one of its own imports
// can run before the module it needs has finished evaluating, and then reads `undefined` from it;
// and two modules that need each other cannot be understood, tested or moved one at a time.
// The graph holds every import of src/**/*.ts: `import`, `export … from`, a dynamic `import()`
// (it loads the module, only later) and `import type` too. A type-only edge is erased at run
// time, but a circle through one still ties the two modules together; the shared type belongs in
// a module both can import.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = path.join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The src/-relative files a source text imports, statically, dynamically or for types only. */
function importedFiles(text: string, file: string): string[] {
  const withoutComments = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specifiers = [
    ...withoutComments.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gm),
    ...withoutComments.matchAll(/^\s*import\s*'([^']+)'/gm),
    ...withoutComments.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) =>
      path.relative(SRC, path.resolve(path.dirname(file), specifier)).replace(/\.js$/, '.ts'),
    );
}

/** One circle for each group of modules that reach one another, as a path that closes on itself. */
function cycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm finds the strongly connected components; each one with more than one
  // module (or a module importing itself) holds at least one circle, reported as one path.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    indexOf.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexOf.get(next)!));
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      const selfLoop = (graph.get(node) ?? []).includes(node);
      if (component.length > 1 || selfLoop) components.push(component);
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indexOf.has(node)) visit(node);
  return components.map((component) => circleThrough(graph, new Set(component)));
}

/** One circle inside a strongly connected component, as a path starting and ending at its first module. */
function circleThrough(graph: Map<string, string[]>, members: Set<string>): string[] {
  const start = [...members].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const circle = [start];
        for (let at = node; at !== start; at = previous.get(at)!) circle.splice(1, 0, at);
        return [...circle, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

describe('import cycles', () => {
  it('reads every kind of import', () => {
    const file = path.join(SRC, 'a/b.ts');
    const text = [
      "import type { A } from './t.js';",
      "import { type B, c } from '../u.js';",
      "export { d } from './v.js';",
      "import './w.js';",
      "import {\n  e,\n  f,\n} from './x.js';",
      "// import { g } from './commented.js';",
      "import { h } from 'node:fs';",
      "const later = await import('./y.js');",
    ].join('\n');
    expect(importedFiles(text, file).sort()).toEqual([
      'a/t.ts',
      'a/v.ts',
      'a/w.ts',
      'a/x.ts',
      'a/y.ts',
      'u.ts',
    ]);
  });

  it('finds a circle of three and leaves a chain alone', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c', 'a']]);
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('src/ has none', () => {
    const graph = new Map<string, string[]>();
    for (const file of sourceFiles(SRC)) {
      graph.set(path.relative(SRC, file), importedFiles(readFileSync(file, 'utf8'), file));
    }
    expect(graph.size).toBeGreaterThan(100);
    const found = cycles(graph).map((circle) => circle.join(' → '));
    expect(found).toEqual([]);
  });
});
