import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/*
 * `npm run shape`: the repository's shape measures (issue 58), printed so anyone can re-measure:
 * lines in src, functions over 100 and 200 lines, the casts that step around the types, folder-level
 * import cycles, and the duplicate pairs the `duplicates` tool counts (where it is installed).
 * It reads files and prints; it changes nothing.
 */

const ROOT = process.cwd();
const SRC = join(ROOT, 'src');

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|cts)$/.test(entry) && !entry.endsWith('.d.ts') ? [path] : [];
  });

type LongFunction = { where: string; lines: number };

/** Every function-like node (declarations, methods, arrows, expressions, accessors) and its length in lines. */
const functionLengths = (path: string, text: string): LongFunction[] => {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const end = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ where: `${relative(ROOT, path)}:${start + 1}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
};

const count = (text: string, pattern: RegExp) => (text.match(pattern) ?? []).length;

/** The folder a module belongs to: src/<folder>, or the top-level file itself (src/app.ts). */
const folderOf = (path: string) => {
  const parts = path.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : path;
};

type Cruised = {
  modules: {
    source: string;
    dependencies: { resolved: string; dependencyTypes: string[] }[];
  }[];
};

/** Strongly connected components of more than one folder (Tarjan's algorithm). */
const cycles = (edges: Map<string, Set<string>>): string[][] => {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!indices.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!));
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!indices.has(node)) connect(node);
  return found;
};

const folderCycles = (runtimeOnly: boolean): string[][] => {
  const out = execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
      'src',
      '--config',
      '.dependency-cruiser.cjs',
      '--output-type',
      'json',
    ],
    { cwd: ROOT, maxBuffer: 256 * 2 ** 20 },
  ).toString();
  const cruised = JSON.parse(out) as Cruised;
  const edges = new Map<string, Set<string>>();
  for (const module of cruised.modules) {
    if (!module.source.startsWith('src/')) continue;
    const from = folderOf(module.source);
    for (const dependency of module.dependencies) {
      if (!dependency.resolved.startsWith('src/')) continue;
      if (runtimeOnly && dependency.dependencyTypes.includes('type-only')) continue;
      const to = folderOf(dependency.resolved);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  return cycles(edges);
};

/** The `duplicates` tool's count of pairs in src, and of those it does not call boilerplate. */
const duplicatePairs = (): string => {
  const run = spawnSync('duplicates', ['--repo', 'src', '--most', '200', '--seconds', '300'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  if (run.error || run.status !== 0) return 'not measured (the `duplicates` tool is not installed here)';
  const lines = run.stdout.split('\n');
  const rows = lines.filter((line) => /^D\d+ /.test(line));
  const notBoilerplate = rows.filter((line) => !/boilerplate/.test(line)).length;
  const more = /\(\+(\d+) more pairs\)/.exec(run.stdout);
  const total = rows.length + (more ? Number(more[1]) : 0);
  // Rows come most shared first, boilerplate last: when the list is cut, the cut rows are boilerplate
  // only if the shown ones already end in boilerplate.
  const cutIsBoilerplate = !more || /boilerplate/.test(rows.at(-1) ?? '');
  return `${total} (not boilerplate: ${notBoilerplate}${cutIsBoilerplate ? '' : ' or more'}); ${lines[0] ?? ''}`;
};

const main = () => {
  const files = sourceFiles(SRC);
  let lines = 0;
  let asUnknownAs = 0;
  let asAstNode = 0;
  const functions: LongFunction[] = [];
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    lines += text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    // This script names both casts (its patterns, its report) without making them.
    if (path !== __filename) {
      asUnknownAs += count(text, /\bas unknown as\b/g);
      asAstNode += count(text, /\bas AstNode\b/g);
    }
    functions.push(...functionLengths(path, text));
  }
  const over100 = functions.filter((f) => f.lines > 100).sort((a, b) => b.lines - a.lines);
  const over200 = over100.filter((f) => f.lines > 200);
  const allCycles = folderCycles(false);
  const runtimeCycles = folderCycles(true);
  const describeCycles = (found: string[][]) =>
    found.length === 0 ? 'none' : found.map((c) => `${c.length} folders: ${c.join(' ')}`).join('\n    ');

  const report = [
    `files in src:                      ${files.length}`,
    `lines in src:                      ${lines}`,
    `functions over 100 lines:          ${over100.length} (over 200: ${over200.length})`,
    ...over100
      .slice(0, Number(process.env.SHAPE_TOP ?? 15))
      .map((f) => `    ${String(f.lines).padStart(4)}  ${f.where}`),
    `'as unknown as' / 'as AstNode':    ${asUnknownAs} / ${asAstNode}`,
    `folder-level import cycles:        ${describeCycles(allCycles)}`,
    `  of run-time imports only:        ${describeCycles(runtimeCycles)}`,
    `duplicate pairs (>= 6 lines):      ${duplicatePairs()}`,
  ];
  console.log(report.join('\n'));
};

main();
