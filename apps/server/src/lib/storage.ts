/**
 * Where uploaded files live. The local adapter keeps them under a directory; an object
 * store implements the same three methods.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`file is larger than ${maxBytes} bytes`);
  }
}

export interface StoredObject {
  size: number;
  sha256: string;
}

export interface FileStorage {
  /** Streams `source` to `key`, hashing it; refuses (and keeps nothing) past `maxBytes`. */
  write(key: string, source: Readable, maxBytes: number): Promise<StoredObject>;
  read(key: string): Readable;
  remove(key: string): Promise<void>;
}

const KEY = /^[a-z0-9][a-z0-9/_-]{0,190}$/;

export class LocalFileStorage implements FileStorage {
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    if (!KEY.test(key) || key.includes('..')) throw new Error(`bad storage key ${key}`);
    return path.join(this.root, key);
  }

  async write(key: string, source: Readable, maxBytes: number): Promise<StoredObject> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const partial = `${target}.${randomBytes(4).toString('hex')}.part`;
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        if (size > maxBytes) return callback(new FileTooLargeError(maxBytes));
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(partial, { flags: 'wx' }));
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return { size, sha256: hash.digest('hex') };
  }

  read(key: string): Readable {
    return createReadStream(this.pathOf(key));
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
