/**
 * Every way svc is started carries the Node flags and the environment of
 * apps/server/src/node-flags.ts: `npm start` (the README's command), the `svc` command's own first
 * line, and docs/deploy.md's launch lines.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS, PROCESS_ENV } from '../apps/server/src/node-flags.js';
import { REPO_ROOT } from './support/server.js';

const flags = NODE_FLAGS.join(' ');
/** `NAME=value ...` before `node`, as a shell and `env -S` read it. */
const environment = Object.entries(PROCESS_ENV)
  .map(([name, value]) => `${name}=${value}`)
  .join(' ');
const launch = `${environment} node ${flags}`;
const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

describe('svc’s Node flags', () => {
  it('are on npm start', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start!;
    expect(start).toContain(`${launch} apps/server/dist/main.js serve`);
  });

  it('are on the svc command’s first line, source and build', () => {
    expect(read('apps/server/src/main.ts').split('\n')[0]).toBe(`#!/usr/bin/env -S ${launch}`);
    expect(read('apps/server/dist/main.js').split('\n')[0]).toBe(`#!/usr/bin/env -S ${launch}`);
  });

  it('are on every launch line of the deployment guide', () => {
    const launches = read('docs/deploy.md')
      .split('\n')
      .filter((line) => /\bnode\b.*dist\/main\.js (serve|worker)/.test(line));
    expect(launches.length).toBeGreaterThan(0);
    for (const line of launches) expect(line).toContain(`${launch} `);
  });
});
