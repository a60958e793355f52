/**
 * A throw-away S3-compatible object store on a free loopback port: s3rver (an npm package, a
 * Koa server that keeps objects as files) run as its own process on a temp directory, with the
 * bucket svc is pointed at already made. The AWS SDK talks HTTP to it exactly as to S3
 * (docs/decisions.md, #43 for why this one).
 */
import {
  CreateBucketCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { vi } from 'vitest';
import { parseStorageUrl } from '../../apps/server/src/config.js';
import { S3FileStorage } from '../../apps/server/src/lib/s3-storage.js';
import { freePort } from './ports.js';

export const S3_BUCKET = 'svc-test';
/** s3rver's one account: another access key is refused (InvalidAccessKeyId); the secret is not checked. */
export const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const S3RVER_BIN = path.join(
  path.dirname(createRequire(import.meta.url).resolve('s3rver/package.json')),
  'bin/s3rver.js',
);

export interface RunningS3Server {
  port: number;
  endpoint: string;
  bucket: string;
  /** Where s3rver keeps the objects (kept across a stop and a start on it again). */
  directory: string;
  /** What an svc process needs to keep its files in the bucket. */
  env: Record<string, string>;
  /** The keys in the bucket, sorted. */
  keys(prefix?: string): Promise<string[]>;
  /** The parts it holds of multipart uploads not completed (or aborted) yet. */
  partsInFlight(): number;
  /** Puts `bytes` under `key` behind svc's back (an object damaged in the store). */
  put(key: string, bytes: Buffer): Promise<void>;
  /** Kills the server (SIGKILL: the store is gone at once); its directory stays. */
  stop(): Promise<void>;
  /** stop(), then removes its directory. */
  dispose(): Promise<void>;
}

/** `port` and `directory`: start a stopped one again where its clients look for it. */
export async function startS3Server(opts: { port?: number; directory?: string } = {}): Promise<RunningS3Server> {
  const port = opts.port ?? (await freePort());
  const directory = opts.directory ?? mkdtempSync(path.join(tmpdir(), 'svc-s3-'));
  const child = spawn(
    process.execPath,
    [S3RVER_BIN, '--directory', directory, '--address', '127.0.0.1', '--port', String(port), '--silent'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('S3rver listening')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}): ${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3_CREDENTIALS,
  });
  // Made as a client makes it; a directory started on again already has it.
  await client
    .send(new HeadBucketCommand({ Bucket: S3_BUCKET }))
    .catch(() => client.send(new CreateBucketCommand({ Bucket: S3_BUCKET })));
  const stop = async () => {
    client.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return {
    port,
    endpoint,
    bucket: S3_BUCKET,
    directory,
    env: {
      STORAGE_URL: `s3://${S3_BUCKET}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`,
      AWS_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey,
    },
    async keys(prefix) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: prefix, ContinuationToken: token }),
        );
        keys.push(...(page.Contents ?? []).map((object) => object.Key!));
        token = page.NextContinuationToken;
      } while (token);
      return keys.sort();
    },
    partsInFlight() {
      // s3rver keeps an upload's parts under <bucket>/._S3rver_uploads/<upload id>/<part number>.
      const uploads = path.join(directory, S3_BUCKET, '._S3rver_uploads');
      if (!existsSync(uploads)) return 0;
      return readdirSync(uploads, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .reduce(
          (sum, upload) => sum + readdirSync(path.join(uploads, upload.name)).filter((f) => /^\d+$/.test(f)).length,
          0,
        );
    },
    async put(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: S3_BUCKET, Key: key, Body: bytes }));
    },
    stop,
    async dispose() {
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * A server and the adapter svc makes for it, the credentials in the AWS SDK's own variables as an
 * operator sets them: for service tests of what reaches the store. `dispose()` ends both.
 */
export async function startS3Storage(): Promise<{
  s3: RunningS3Server;
  storage: S3FileStorage;
  dispose(): Promise<void>;
}> {
  const s3 = await startS3Server();
  vi.stubEnv('AWS_ACCESS_KEY_ID', s3.env.AWS_ACCESS_KEY_ID);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', s3.env.AWS_SECRET_ACCESS_KEY);
  const storage = new S3FileStorage(parseStorageUrl(s3.env.STORAGE_URL!));
  return {
    s3,
    storage,
    async dispose() {
      storage.close();
      await s3.dispose();
      vi.unstubAllEnvs();
    },
  };
}
