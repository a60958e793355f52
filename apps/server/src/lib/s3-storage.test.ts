/**
 * The object-store adapter against a real S3-compatible server on loopback (s3rver, started by
 * the test): what it keeps, what it refuses, and what a store that is down, refuses the
 * credentials or lacks the bucket answers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startS3Server, startS3Storage, type RunningS3Server } from '../../../../test/support/s3-server.js';
import { parseStorageUrl } from '../config.js';
import { AppError } from './errors.js';
import { S3FileStorage } from './s3-storage.js';
import { FileTooLargeError } from './storage.js';

let s3: RunningS3Server;
let storage: S3FileStorage;
let started: Awaited<ReturnType<typeof startS3Storage>> | undefined;

beforeAll(async () => {
  started = await startS3Storage();
  ({ s3, storage } = started);
});

afterAll(() => started?.dispose());

/** `bytes` in chunks of 64 KiB, as a multipart body arrives. */
function streamOf(bytes: Buffer): Readable {
  return Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; at += 65_536) yield bytes.subarray(at, at + 65_536);
    })(),
  );
}

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('S3FileStorage', () => {
  it('keeps a small file: read back byte for byte, with its size and SHA-256', async () => {
    const bytes = randomBytes(10_000);
    const stored = await storage.write('store-a/small', streamOf(bytes), 1_000_000);
    expect(stored).toEqual({ size: bytes.length, sha256: sha256(bytes) });
    expect(await bytesOf(storage.read('store-a/small'))).toEqual(bytes);
    expect(await s3.keys('store-a/')).toEqual(['store-a/small']);
  });

  it('keeps a file of several parts (a multipart upload) byte for byte', async () => {
    const bytes = randomBytes(12 * 1024 * 1024 + 123);
    const stored = await storage.write('store-a/large', streamOf(bytes), 20 * 1024 * 1024);
    expect(stored).toEqual({ size: bytes.length, sha256: sha256(bytes) });
    expect(sha256(await bytesOf(storage.read('store-a/large')))).toBe(sha256(bytes));
  });

  it('keeps exactly maxBytes', async () => {
    const bytes = randomBytes(4096);
    expect((await storage.write('store-b/exact', streamOf(bytes), 4096)).size).toBe(4096);
  });

  it('refuses a file past maxBytes while it streams, and the bucket keeps nothing of it', async () => {
    await expect(storage.write('store-c/small-too-large', streamOf(randomBytes(4097)), 4096)).rejects.toBeInstanceOf(
      FileTooLargeError,
    );
    // Past a first part: the multipart upload it began is aborted.
    await expect(
      storage.write('store-c/large-too-large', streamOf(randomBytes(11 * 1024 * 1024)), 8 * 1024 * 1024),
    ).rejects.toBeInstanceOf(FileTooLargeError);
    expect(await s3.keys('store-c/')).toEqual([]);
  });

  it('keeps nothing of a stream that fails midway (the client went away)', async () => {
    const failing = new Readable({ read() {} });
    failing.push(randomBytes(6 * 1024 * 1024));
    setTimeout(() => failing.destroy(new Error('client went away')), 50);
    await expect(storage.write('store-d/broken', failing, 50 * 1024 * 1024)).rejects.toThrow('client went away');
    expect(await s3.keys('store-d/')).toEqual([]);
  });

  it('removes a file; removing a key that holds nothing is fine', async () => {
    await storage.write('store-e/gone', streamOf(randomBytes(100)), 1000);
    await storage.remove('store-e/gone');
    expect(await s3.keys('store-e/')).toEqual([]);
    await expect(storage.remove('store-e/never-there')).resolves.toBeUndefined();
  });

  it('signs a download URL the store answers with the file, its name and its media type', async () => {
    const bytes = randomBytes(3000);
    await storage.write('store-f/file', streamOf(bytes), 10_000);
    const url = await storage.downloadUrl('store-f/file', {
      fileName: 'Guide – v2.pdf',
      mediaType: 'application/pdf',
      expiresInSeconds: 300,
    });
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('300');
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="Guide _ v2.pdf"; filename*=UTF-8''Guide%20%E2%80%93%20v2.pdf`,
    );
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
  });

  it('answers service_unavailable when the store is down, and works again when it is back', async () => {
    const down = await startS3Server();
    const location = parseStorageUrl(down.env.STORAGE_URL!);
    const adapter = new S3FileStorage(location);
    try {
      await down.stop();
      const unavailable = { appCode: 'service_unavailable' };
      await expect(adapter.write('store-g/file', streamOf(randomBytes(1000)), 10_000)).rejects.toMatchObject(
        unavailable,
      );
      await expect(bytesOf(adapter.read('store-g/file'))).rejects.toBeInstanceOf(AppError);
      await expect(adapter.remove('store-g/file')).rejects.toMatchObject(unavailable);
      await expect(
        adapter.downloadUrl('store-g/file', { fileName: 'a', mediaType: 'text/plain', expiresInSeconds: 60 }),
      ).rejects.toMatchObject(unavailable);

      const back = await startS3Server({ port: down.port, directory: down.directory });
      try {
        const bytes = randomBytes(1000);
        expect((await adapter.write('store-g/file', streamOf(bytes), 10_000)).size).toBe(1000);
        expect(await bytesOf(adapter.read('store-g/file'))).toEqual(bytes);
      } finally {
        await back.dispose();
      }
    } finally {
      adapter.close();
    }
  });

  it('answers service_unavailable when the store refuses the credentials, and keeps nothing', async () => {
    // An access key s3rver does not know (it checks the key, not the signature's secret).
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'NOT-AN-ACCOUNT');
    const adapter = new S3FileStorage(parseStorageUrl(s3.env.STORAGE_URL!));
    try {
      const unavailable = { appCode: 'service_unavailable' };
      await expect(adapter.write('store-k/file', streamOf(randomBytes(10)), 100)).rejects.toMatchObject(unavailable);
      await expect(adapter.remove('store-k/file')).rejects.toMatchObject(unavailable);
      expect(await s3.keys('store-k/')).toEqual([]);
    } finally {
      adapter.close();
      vi.stubEnv('AWS_ACCESS_KEY_ID', s3.env.AWS_ACCESS_KEY_ID);
    }
  });

  it('answers service_unavailable for a bucket that does not exist', async () => {
    const adapter = new S3FileStorage({ ...parseStorageUrl(s3.env.STORAGE_URL!), bucket: 'no-such-bucket' });
    try {
      await expect(adapter.write('store-h/file', streamOf(randomBytes(10)), 100)).rejects.toMatchObject({
        appCode: 'service_unavailable',
      });
    } finally {
      adapter.close();
    }
  });
});

describe('STORAGE_URL', () => {
  it('reads the bucket, endpoint, region and path style', () => {
    expect(parseStorageUrl('s3://files?endpoint=http://127.0.0.1:9000&region=eu-west-1&forcePathStyle=true')).toEqual({
      bucket: 'files',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
    });
    expect(parseStorageUrl('s3://my.bucket')).toEqual({
      bucket: 'my.bucket',
      endpoint: undefined,
      region: 'us-east-1',
      forcePathStyle: false,
    });
  });

  it.each([
    ['not a url', 'is not a URL'],
    ['https://bucket', 'has the scheme https, not s3'],
    ['s3://ab', 'names no valid bucket (ab)'],
    ['s3://Bucket_1', 'names no valid bucket'],
    ['s3://key:secret@bucket', 'holds credentials'],
    ['s3://bucket/prefix', 'has more than a bucket before the ?'],
    ['s3://bucket?endpoint=ftp://x', 'has an endpoint that is not an http(s) origin'],
    ['s3://bucket?forcePathStyle=yes', 'has a forcePathStyle other than true or false'],
    ['s3://bucket?regoin=eu', 'has an unknown parameter regoin'],
  ])('refuses %s in one line', (value, why) => {
    expect(() => parseStorageUrl(value)).toThrow(why);
    try {
      parseStorageUrl(value);
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
      expect((error as Error).message).toContain('expected s3://<bucket>?endpoint=');
    }
  });
});
