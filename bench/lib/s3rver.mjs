/**
 * An S3-compatible object store on a free loopback port for the benchmarks: s3rver (the store the
 * tests use, test/support/s3-server.ts; docs/decisions.md, #43) as its own process on a temp
 * directory, its bucket made, and the environment an svc process needs to keep its files there.
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { onCleanup } from './cleanup.mjs';
import { freePort } from './proc.mjs';
import { tempDir } from './service.mjs';

const BUCKET = 'svc-bench';
/** s3rver's one account. */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startS3rver() {
  const bin = path.join(path.dirname(createRequire(import.meta.url).resolve('s3rver/package.json')), 'bin/s3rver.js');
  const port = await freePort();
  const directory = tempDir('svc-bench-s3-');
  const child = spawn(
    process.execPath,
    [bin, '--directory', directory, '--address', '127.0.0.1', '--port', String(port), '--silent'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk) => {
      output += chunk.toString();
      if (output.includes('S3rver listening')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}): ${output}`)));
  });
  const stop = onCleanup(`stop s3rver (pid ${child.pid})`, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS });
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  client.destroy();
  return {
    endpoint,
    pid: child.pid,
    env: {
      STORAGE_URL: `s3://${BUCKET}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    stop,
  };
}
