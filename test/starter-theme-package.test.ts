/**
 * The starter theme builds outside this repository, as a theme builder who copies it gets it: the
 * folder copied to a temporary directory (no workspace, no hoisted node_modules above it), its
 * `@svc/sdk` pointed at the packed SDK (`npm pack` of the built package), its other dependencies
 * installed by npm from the local cache (the registry only for what the cache lacks), then
 * `npm run build` with its two settings. It needed `@types/node` of its own for vite.config.ts.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/server.js';

const THEME_DIR = path.join(REPO_ROOT, 'examples/starter-theme');
const SDK_DIR = path.join(REPO_ROOT, 'packages/sdk');
let work: string | undefined;

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** The child's environment: ours without npm's own variables (they carry the repository's prefix and config). */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!/^npm_/i.test(key) && key !== 'INIT_CWD' && key !== 'NODE_OPTIONS') env[key] = value;
  return { ...env, ...extra };
}

function run(command: string, args: string[], cwd: string, extra: Record<string, string> = {}) {
  return new Promise<{ code: number; output: string }>((resolve) => {
    execFile(command, args, { cwd, env: childEnv(extra), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({
        code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
        output: `${stdout}${stderr}`,
      });
    });
  });
}

describe('the starter theme outside the monorepo', () => {
  it('installs with the packed SDK and builds', { timeout: 240_000 }, async () => {
    work = await mkdtemp(path.join(tmpdir(), 'svc-theme-'));
    const theme = path.join(work, 'my-theme');
    await cp(THEME_DIR, theme, {
      recursive: true,
      filter: (source) => !/[\\/](node_modules|dist)$/.test(source),
    });
    const packed = await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', work], SDK_DIR);
    expect(packed.code, packed.output).toBe(0);
    const tarball = (await readdir(work)).find((name) => name.endsWith('.tgz'));
    expect(tarball).toBeDefined();

    const manifest = JSON.parse(await readFile(path.join(theme, 'package.json'), 'utf8'));
    manifest.dependencies['@svc/sdk'] = `file:../${tarball}`;
    await writeFile(path.join(theme, 'package.json'), JSON.stringify(manifest, null, 2));

    const install = await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--no-package-lock'],
      theme,
    );
    expect(install.code, install.output).toBe(0);
    const build = await run('npm', ['run', 'build'], theme, {
      VITE_SVC_URL: 'https://svc.example',
      VITE_STORE: 'acme',
    });
    expect(build.code, build.output).toBe(0);
    for (const page of ['index.html', 'product.html', 'cart.html'])
      expect(await readFile(path.join(theme, 'dist', page), 'utf8')).toContain('<script type="module"');
    // The settings are baked into the built module.
    const assets = await readdir(path.join(theme, 'dist/assets'));
    const code = await Promise.all(
      assets
        .filter((name) => name.endsWith('.js'))
        .map((name) => readFile(path.join(theme, 'dist/assets', name), 'utf8')),
    );
    expect(code.join('\n')).toContain('https://svc.example');
  });
});
