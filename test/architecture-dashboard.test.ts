/**
 * The dashboard's shape, read from its sources: no import circle between its files (type-only and
 * lazy imports included), and the router above the screens. `router.tsx` imports every screen (lazily)
 * and each screen's search params; a screen, the shell or a ui part reaches its route through the
 * router's registered types (`getRouteApi(id)`, `useSearch({ from })`), never by importing the router.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, importsOf, resolveSpecifier, specifiersIn } from './support/imports.js';

const SRC = fileURLToPath(new URL('../apps/dashboard/src/', import.meta.url));
const ROUTER = path.join(SRC, 'router.tsx');

/** Every TypeScript source of the dashboard (.ts and .tsx). */
const sources = readdirSync(SRC, { withFileTypes: true, recursive: true })
  .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
  .map((entry) => path.join(entry.parentPath, entry.name));

const relative = (file: string) => path.relative(SRC, file).split(path.sep).join('/');

/** file -> the files it imports (relative to src/). */
function fileGraph(): Map<string, Set<string>> {
  return new Map(sources.map((file) => [relative(file), new Set(importsOf(file).map(relative))]));
}

/** What sits below the router: the screens, the store's shell and the shared ui parts. */
const isBelowRouter = (file: string) => /^(screens|shell|ui)\//.test(relative(file));

describe("the dashboard's import reader", () => {
  it('resolves the specifiers as the dashboard writes them: without an extension, to .ts or .tsx', () => {
    const main = path.join(SRC, 'main.tsx');
    expect(relative(resolveSpecifier(main, './router'))).toBe('router.tsx');
    expect(relative(resolveSpecifier(main, './router.js'))).toBe('router.tsx');
    expect(relative(resolveSpecifier(main, './api'))).toBe('api.ts');
    expect(relative(resolveSpecifier(main, './api.js'))).toBe('api.ts');
    expect(relative(resolveSpecifier(main, './styles.css'))).toBe('styles.css');
    // A folder of the same name is not a file: `./screens/orders` names no module here.
    expect(relative(resolveSpecifier(main, './screens/orders'))).toBe('screens/orders');
  });

  it('resolves every relative import of the dashboard to a file', () => {
    expect(sources.length).toBeGreaterThan(40);
    const unresolved = sources.flatMap((file) =>
      importsOf(file)
        .filter((target) => !(statSync(target, { throwIfNoEntry: false })?.isFile() ?? false))
        .map((target) => `${relative(file)} -> ${relative(target)}`),
    );
    expect(unresolved).toEqual([]);
  });

  it("sees the router's imports: its lazy screens and what it imports statically", () => {
    const graph = fileGraph();
    // A reader that found nothing would pass the checks below.
    expect(specifiersIn(readFileSync(ROUTER, 'utf8'))).toContain('./screens/orders/Orders');
    expect(graph.get('router.tsx')?.has('screens/orders/Orders.tsx')).toBe(true);
    expect(graph.get('router.tsx')?.has('shell/StoreShell.tsx')).toBe(true);
    expect(graph.get('router.tsx')?.has('api.ts')).toBe(true);
    expect(graph.get('main.tsx')?.has('router.tsx')).toBe(true);
    // Type-only imports are edges too.
    const typeOnly = sources.filter((file) => /^import type [^;]* from '\.{1,2}\//m.test(readFileSync(file, 'utf8')));
    expect(typeOnly.length).toBeGreaterThan(0);
    for (const file of typeOnly) {
      const specifier = /^import type [^;]* from '(\.{1,2}\/[^']+)'/m.exec(readFileSync(file, 'utf8'))![1]!;
      expect(graph.get(relative(file))?.has(relative(resolveSpecifier(file, specifier))), relative(file)).toBe(true);
    }
  });
});

describe('the dashboard code', () => {
  it('has no import circle between files, type-only and lazy imports included', () => {
    expect(cycles(fileGraph()).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('keeps the router above the screens: no screen, shell or ui part imports router.tsx', () => {
    const below = sources.filter(isBelowRouter);
    expect(below.length).toBeGreaterThan(30);
    const offenders = below.filter((file) => importsOf(file).includes(ROUTER)).map((file) => relative(file));
    expect(offenders).toEqual([]);
  });
});
