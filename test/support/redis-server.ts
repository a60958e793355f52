/** A throw-away redis-server on a free port, for tests that stop Redis on purpose. */
import { spawn } from 'node:child_process';
import { freePort } from './ports.js';

/** `port`: listen there (to start a stopped one again where its clients look for it); default a free one. */
export async function startRedisServer(
  opts: { port?: number } = {},
): Promise<{ url: string; port: number; stop: () => Promise<void>; pause: () => void; resume: () => void }> {
  const port = opts.port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    /** The server stops answering (SIGSTOP): connections stay open, commands are sent and wait. */
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    async stop() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
