/**
 * Where uploaded files live. The local adapter keeps them under a directory; the object-store
 * adapter (lib/s3-storage.ts) implements the same methods in an S3-compatible bucket, chosen by
 * STORAGE_URL (docs/decisions.md, #43).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from './errors.js';

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`file is larger than ${maxBytes} bytes`);
  }
}

export interface StoredObject {
  size: number;
  sha256: string;
}

/** How a buyer's browser is to save a file it is sent to fetch from the store itself. */
export interface DownloadLink {
  fileName: string;
  mediaType: string;
  expiresInSeconds: number;
}

/** An object as a store lists it. */
export interface ListedObject {
  key: string;
  modifiedAt: Date;
}

export interface FileStorage {
  /** Streams `source` to `key`, hashing it; refuses (and keeps nothing) past `maxBytes`. */
  write(key: string, source: Readable, maxBytes: number): Promise<StoredObject>;
  read(key: string): Readable;
  /** Removing a key that holds nothing is not an error. */
  remove(key: string): Promise<void>;
  /**
   * A URL the buyer's browser fetches the object from directly, valid for `expiresInSeconds`
   * (an object store's presigned GET); absent where svc serves the bytes itself (local disk).
   */
  downloadUrl?(key: string, link: DownloadLink): Promise<string>;
  /** Every object kept, with when it was written (the object store's, for the orphan sweep). */
  list?(): AsyncIterable<ListedObject>;
}

/**
 * The Transform every adapter streams an upload through: it counts and hashes the bytes and
 * fails the stream with FileTooLargeError at the first byte past `maxBytes`, so a file too large
 * is refused while it arrives, never after it was kept. `stored()` is read once the stream ended.
 */
export function meteredUpload(maxBytes: number): { meter: Transform; stored: () => StoredObject } {
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
  return { meter, stored: () => ({ size, sha256: hash.digest('hex') }) };
}

/**
 * A media type as a `Content-Type` may carry it: `type/subtype`, then parameters, in printable
 * ASCII. Anything else (a control character, a line break, a non-ASCII letter) cannot be sent
 * back as a header: Node refuses it (`ERR_INVALID_CHAR`), and every download of the file failed.
 */
const MEDIA_TYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*;[\x20-\x7e\t]*)?$/;

/** The longest media type kept with a file: longer ones are no type a browser knows. */
export const MEDIA_TYPE_MAX = 100;

/**
 * The media type to store with an uploaded file, from what the client declared: the default for
 * an empty one, 415 for one that could not be sent back as a header (see MEDIA_TYPE).
 */
export function uploadedMediaType(declared: string | undefined): string {
  const type = (declared ?? '').trim();
  if (type === '') return 'application/octet-stream';
  if (!MEDIA_TYPE.test(type))
    throw new AppError('unsupported_media_type', "The file's Content-Type is not a valid media type.");
  if (type.length <= MEDIA_TYPE_MAX) return type;
  // Too long with its parameters: the type alone, if that is short enough.
  const bare = type.split(';')[0]!.trim();
  if (bare.length > MEDIA_TYPE_MAX)
    throw new AppError('unsupported_media_type', `A media type has at most ${MEDIA_TYPE_MAX} characters.`);
  return bare;
}

/** The `Content-Type` to serve a stored file with: its own, or `application/octet-stream` for a value stored before it was checked. */
export function servedMediaType(stored: string): string {
  return stored.length <= MEDIA_TYPE_MAX && MEDIA_TYPE.test(stored) ? stored : 'application/octet-stream';
}

/** `attachment` with the name in ASCII (others replaced) and exactly in UTF-8, as browsers read it. */
export function contentDisposition(fileName: string): string {
  return `attachment; filename="${fileName.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

const KEY = /^[a-z0-9][a-z0-9/_-]{0,190}$/;

/** Keys are made by svc; one that is not of its shape is a bug, refused before any store sees it. */
export function checkedKey(key: string): string {
  if (!KEY.test(key) || key.includes('..')) throw new Error(`bad storage key ${key}`);
  return key;
}

export class LocalFileStorage implements FileStorage {
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    return path.join(this.root, checkedKey(key));
  }

  async write(key: string, source: Readable, maxBytes: number): Promise<StoredObject> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const partial = `${target}.${randomBytes(4).toString('hex')}.part`;
    const { meter, stored } = meteredUpload(maxBytes);
    const sink = createWriteStream(partial, { flags: 'wx' });
    try {
      await pipeline(source, meter, sink);
      await rename(partial, target);
    } catch (error) {
      // pipeline() rejects on the first failure, before the file stream has closed: its open may
      // still wait in the thread pool, and a removal that ran first would leave the file it then
      // creates. The removal waits for the close.
      if (!sink.closed) await new Promise<void>((closed) => sink.once('close', () => closed()));
      await rm(partial, { force: true });
      throw error;
    }
    return stored();
  }

  read(key: string): Readable {
    return createReadStream(this.pathOf(key));
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
