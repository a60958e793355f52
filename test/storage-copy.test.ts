/**
 * Black-box: `svc storage copy --to <STORAGE_URL>` on an install with 1,000 files on local disk:
 * all copied and verified; run again, nothing is copied; an object damaged in the store is named
 * and the run exits non-zero, leaving it as it is.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from './support/databases.js';
import { startS3Server, type RunningS3Server } from './support/s3-server.js';
import { SERVER_ENTRY } from './support/server.js';

const run = promisify(execFile);
const FILES = 1_000;
let s3: RunningS3Server;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let env: Record<string, string>;
const local = new Map<string, Buffer>();

beforeAll(async () => {
  s3 = await startS3Server();
  db = await freshDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-copy-'));
  for (let i = 0; i < FILES; i++) {
    const key = `store-${i % 7}/file-${String(i).padStart(4, '0')}`;
    const bytes = randomBytes(200 + (i % 13) * 97);
    mkdirSync(path.join(dataDir, 'files', path.dirname(key)), { recursive: true });
    writeFileSync(path.join(dataDir, 'files', key), bytes);
    local.set(key, bytes);
  }
  // What an upload cut short by a crash leaves: not a stored file, not copied.
  writeFileSync(path.join(dataDir, 'files', 'store-0', 'file-9999.1a2b3c4d.part'), 'partial');
  env = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    AWS_ACCESS_KEY_ID: s3.env.AWS_ACCESS_KEY_ID!,
    AWS_SECRET_ACCESS_KEY: s3.env.AWS_SECRET_ACCESS_KEY!,
  };
});

afterAll(async () => {
  await db?.drop();
  await s3?.dispose();
});

async function svc(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SERVER_ENTRY, ...args], {
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const lastLine = (text: string) => text.trim().split('\n').at(-1);

describe('svc storage copy', () => {
  it('copies 1,000 files and verifies each; a second run copies nothing; a damaged object is named and fails the run', async () => {
    const to = s3.env.STORAGE_URL!;
    const first = await svc('storage', 'copy', '--to', to);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`${FILES} files under`);
    expect(first.stdout).toMatch(new RegExp(`\\n500/${FILES}: \\d+ copied, 0 already there\\n`));
    expect(lastLine(first.stdout)).toBe(`${FILES} files: ${FILES} copied, 0 already there, all verified`);
    expect(await s3.keys()).toEqual([...local.keys()].sort());

    const second = await svc('storage', 'copy', '--to', to);
    expect(second.code, second.stderr).toBe(0);
    expect(lastLine(second.stdout)).toBe(`${FILES} files: 0 copied, ${FILES} already there, all verified`);

    const damaged = 'store-5/file-0712';
    await s3.put(damaged, Buffer.from('not the file'));
    const third = await svc('storage', 'copy', '--to', to);
    expect(third.code).toBe(1);
    expect(third.stdout).toContain(`mismatch: ${damaged} is already in the store with other bytes (12 bytes`);
    expect(third.stderr).toContain(`1 of ${FILES} objects in the store differ from the local files: ${damaged}`);
    expect(third.stdout).toContain(`${FILES}/${FILES}: 0 copied, ${FILES - 1} already there`);
  }, 240_000);

  it('refuses a malformed --to or an unknown action before it starts anything (exit 2)', async () => {
    const malformed = await svc('storage', 'copy', '--to', 's3://x');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('STORAGE_URL names no valid bucket (x)');
    const unknown = await svc('storage', 'move', '--to', s3.env.STORAGE_URL!);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown action move');
  });
});
