import { pbkdf2 } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { FileTooLargeError, LocalFileStorage } from './storage.js';

const root = mkdtempSync(path.join(tmpdir(), 'svc-storage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

describe('LocalFileStorage.write', () => {
  it('keeps the file under its key, with its size and hash', async () => {
    const storage = new LocalFileStorage(root);
    const stored = await storage.write('kept/a', Readable.from([Buffer.from('hello')]), 10);
    expect(stored).toEqual({ size: 5, sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824' });
    expect(filesUnder(path.join(root, 'kept'))).toEqual([path.join(root, 'kept', 'a')]);
  });

  it('leaves nothing behind once it has refused a stream that had failed before it was handed over, however busy the thread pool', async () => {
    // The upload route's stream fails on a second part; when that came before the service took
    // the stream, pipeline() rejected while the partial file's open still waited in libuv's
    // thread pool (busy hashing passwords, decoding images), and the clean-up ran before it: the
    // open then made a `.part` file nobody removed (seen in CI). The pool is kept busy here.
    const storage = new LocalFileStorage(root);
    const busy: Promise<unknown>[] = [];
    for (let i = 0; i < 40; i++) {
      for (let j = 0; j < 4; j++) busy.push(promisify(pbkdf2)('p', 's', 20_000, 32, 'sha256'));
      const failed = new Readable({ read() {} });
      failed.on('error', () => undefined);
      failed.destroy(new Error('the second part'));
      await expect(storage.write(`early/${i}`, failed, 1000)).rejects.toThrow('the second part');
    }
    // Whatever was queued behind the hashing has run once they are all done.
    await Promise.all(busy);
    await readdir(root);
    expect(filesUnder(path.join(root, 'early'))).toEqual([]);
  });

  it('leaves nothing behind past its size limit', async () => {
    const storage = new LocalFileStorage(root);
    const big = Readable.from([Buffer.alloc(600), Buffer.alloc(600)]);
    await expect(storage.write('large/a', big, 1000)).rejects.toBeInstanceOf(FileTooLargeError);
    expect(filesUnder(path.join(root, 'large'))).toEqual([]);
  });
});
