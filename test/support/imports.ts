/**
 * Reading a source tree's imports, for the architecture tests: the specifiers a file names, the
 * file each relative one resolves to, and the circles of the graph they make. The server writes
 * `./x.js` for `./x.ts`; the dashboard (Vite, bundler resolution) writes `./x` for `./x.ts` or
 * `./x.tsx`; both are read the same way.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The module specifiers a source names: imports with and without bindings, type-only ones (also
 * `{ type X }`), re-exports, side-effect and dynamic imports, over as many lines as they take.
 * TypeScript's own scanner reads them, so an import-shaped line in a comment or a string is none.
 */
export function specifiersIn(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

const isFile = (candidate: string) => statSync(candidate, { throwIfNoEntry: false })?.isFile() ?? false;

/**
 * The source file a relative specifier names: `./x.js` is `./x.ts` (or `./x.tsx`) in the sources,
 * `./x` is `./x.ts`, `./x.tsx` or a folder's index, and a file named in full (`./styles.css`) is
 * itself. A specifier that names no file resolves to the path it spells, so a test can report it.
 */
export function resolveSpecifier(from: string, specifier: string): string {
  const target = path.resolve(path.dirname(from), specifier);
  const candidates = [
    target.replace(/\.js$/, '.ts'),
    target.replace(/\.js$/, '.tsx'),
    target,
    `${target}.ts`,
    `${target}.tsx`,
    path.join(target, 'index.ts'),
    path.join(target, 'index.tsx'),
  ];
  return candidates.find(isFile) ?? target;
}

/** The relative imports of a file, resolved to paths. */
export function importsOf(file: string): string[] {
  return specifiersIn(readFileSync(file, 'utf8'))
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
    .map((specifier) => resolveSpecifier(file, specifier));
}

/**
 * The cycles of a directed graph, each as the path that closes it: one per edge back to a node
 * still on the search's path, so none found means the graph has no cycle at all.
 */
export function cycles(graph: Map<string, { keys(): Iterable<string> }>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}
