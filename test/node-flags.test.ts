/**
 * Every way svc is started carries the Node flags of apps/server/src/node-flags.ts: `npm start`
 * (the README's command), the `svc` command's own first line, and docs/deploy.md's launch lines.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../apps/server/src/node-flags.js';
import { REPO_ROOT } from './support/server.js';

const flags = NODE_FLAGS.join(' ');
const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

describe('svc’s Node flags', () => {
  it('are on npm start', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start!;
    expect(start).toContain(`node ${flags} apps/server/dist/main.js serve`);
  });

  it('are on the svc command’s first line, source and build', () => {
    expect(read('apps/server/src/main.ts').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${flags}`);
    expect(read('apps/server/dist/main.js').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${flags}`);
  });

  it('are on every launch line of the deployment guide', () => {
    const launches = read('docs/deploy.md')
      .split('\n')
      .filter((line) => /\bnode\b.*dist\/main\.js (serve|worker)/.test(line));
    expect(launches.length).toBeGreaterThan(0);
    for (const line of launches) expect(line).toContain(`node ${flags} `);
  });
});
