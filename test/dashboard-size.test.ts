/**
 * The dashboard shell's initial JavaScript is at most 150 KB gzip (issue 28), and the screens are
 * loaded lazily. Read from the build's manifest (apps/dashboard/dist/.vite/manifest.json): the
 * entry, every chunk it imports statically (transitively; dynamic imports load later), and their
 * CSS, each gzipped on its own as the server sends it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/server.js';

const APP = path.join(REPO_ROOT, 'apps/dashboard');
const DIST = path.join(APP, 'dist');
const BUDGET = 150 * 1024;

interface Chunk {
  file: string;
  name?: string;
  src?: string;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}
const manifest = JSON.parse(readFileSync(path.join(DIST, '.vite/manifest.json'), 'utf8')) as Record<string, Chunk>;

/** The manifest keys the entry loads before anything else: itself and its static imports, transitively. */
function initialChunks(): string[] {
  const entries = Object.keys(manifest).filter((key) => manifest[key]!.isEntry);
  expect(entries, 'one entry').toHaveLength(1);
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    for (const imported of manifest[key]!.imports ?? []) visit(imported);
  };
  visit(entries[0]!);
  return [...seen];
}

/** apps/dashboard/src/screens/**\/*.tsx, as manifest keys (`src/screens/...`). */
function screenFiles(dir = path.join(APP, 'src/screens')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? screenFiles(path.join(dir, entry.name))
      : entry.name.endsWith('.tsx')
        ? [path.relative(APP, path.join(dir, entry.name)).split(path.sep).join('/')]
        : [],
  );
}

describe('the dashboard build', () => {
  it('loads at most 150 KB gzip of JavaScript and CSS before the first screen', () => {
    const initial = initialChunks();
    const files = [...new Set(initial.flatMap((key) => [manifest[key]!.file, ...(manifest[key]!.css ?? [])]))];
    const sizes = files.map((file) => {
      const bytes = readFileSync(path.join(DIST, file));
      return { file, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
    });
    const total = sizes.reduce((sum, size) => sum + size.gzip, 0);
    console.log(
      `dashboard initial load: ${(total / 1024).toFixed(1)} KB gzip of ${(BUDGET / 1024).toFixed(0)} KB ` +
        `(${sizes.map((size) => `${size.file} ${(size.gzip / 1024).toFixed(1)} KB`).join(', ')})`,
    );
    expect(files.some((file) => file.endsWith('.js'))).toBe(true);
    expect(total).toBeLessThanOrEqual(BUDGET);
  });

  it('loads every screen lazily: no screen module is in the initial chunks, each is a dynamic import', () => {
    const initial = new Set(initialChunks());
    const dynamicallyImported = new Set(Object.values(manifest).flatMap((chunk) => chunk.dynamicImports ?? []));
    const screens = screenFiles();
    expect(screens.length).toBeGreaterThan(15);
    for (const screen of screens) {
      const chunk = manifest[screen];
      if (chunk) {
        // A screen of its own chunk: reached only by a dynamic import, never loaded up front.
        expect(initial.has(screen), `${screen} is in the initial load`).toBe(false);
        expect(chunk.isDynamicEntry, `${screen} is a dynamic entry`).toBe(true);
        expect(dynamicallyImported.has(screen), `${screen} is dynamically imported`).toBe(true);
      }
      // A module merged into a shared chunk (a part that several screens use, such as AuthFrame)
      // has no key; that chunk, named after it, is not loaded up front either.
      const base = path.basename(screen, '.tsx');
      for (const key of initial)
        expect(manifest[key]!.name, `${screen}'s code (chunk ${key}) is in the initial load`).not.toBe(base);
    }
    // Every screen the router names is in the build as a dynamic entry.
    const router = readFileSync(path.join(APP, 'src/router.tsx'), 'utf8');
    const routed = [...router.matchAll(/import\('\.\/(screens\/[^']+)'\)/g)].map((match) => `src/${match[1]}.tsx`);
    expect(routed.length).toBeGreaterThan(15);
    for (const screen of routed) expect(manifest[screen]?.isDynamicEntry, screen).toBe(true);
  });
});
