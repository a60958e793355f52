/**
 * A PostgreSQL primary and a streaming replica of the test's own (the machine's shared server is
 * never touched): the system's PostgreSQL binaries, `initdb` for the primary, `pg_basebackup -R`
 * for the replica, each on a free loopback port in a temporary directory. As root they run as
 * the `postgres` user. The replica's WAL replay can be paused, so a test can tell which server
 * answered a read.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';

export interface ReplicatedPostgres {
  /** `postgresql://postgres@127.0.0.1:<port>/svc` of the primary and of the replica. */
  primaryUrl: string;
  replicaUrl: string;
  /** Runs one statement on the replica. */
  onReplica(sql: string): Promise<pg.QueryResult>;
  /** Stops both servers and deletes their files. */
  destroy(): Promise<void>;
}

/** The directory of the system's PostgreSQL server binaries, or undefined when there is none. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = path.join(root, version, 'bin');
    if (['initdb', 'postgres', 'pg_basebackup'].every((tool) => existsSync(path.join(bin, tool)))) return bin;
  }
  return undefined;
}

/** PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}
const runAs = postgresUser();

function run(bin: string, tool: string, args: string[]): void {
  const result = spawnSync(path.join(bin, tool), args, { encoding: 'utf8', ...runAs });
  if (result.status !== 0) throw new Error(`${tool} failed (${result.status}): ${result.stderr || result.stdout}`);
}

async function waitUntilAccepting(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited (${child.exitCode}):\n${output()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`postgres did not answer in 30 s: ${String(error)}\n${output()}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

function startServer(bin: string, dataDir: string, port: number) {
  const args = [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'fsync=off',
    '-c',
    'wal_level=replica',
    '-c',
    'max_wal_senders=4',
    '-c',
    'hot_standby=on',
  ];
  const child = spawn(path.join(bin, 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], ...runAs });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, output: () => text, exited };
}

export async function startReplicatedPostgres(bin: string): Promise<ReplicatedPostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-replica-'));
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const servers: Array<ReturnType<typeof startServer>> = [];
  const destroy = async () => {
    for (const server of servers.reverse()) {
      if (server.child.exitCode === null) server.child.kill('SIGINT'); // fast shutdown
      await server.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run(bin, 'initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    const primary = startServer(bin, primaryDir, primaryPort);
    servers.push(primary);
    const base = `postgresql://postgres@127.0.0.1:${primaryPort}`;
    await waitUntilAccepting(`${base}/postgres`, primary.child, primary.output);
    const admin = new pg.Client({ connectionString: `${base}/postgres` });
    await admin.connect();
    await admin.query('create database svc');
    await admin.end();
    // A copy of the primary that follows it (-R writes standby.signal and primary_conninfo).
    run(bin, 'pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaDir,
      '-R',
      '-X',
      'stream',
      '--checkpoint=fast',
      '--no-sync',
    ]);
    const replica = startServer(bin, replicaDir, replicaPort);
    servers.push(replica);
    const replicaUrl = `postgresql://postgres@127.0.0.1:${replicaPort}/svc`;
    await waitUntilAccepting(replicaUrl, replica.child, replica.output);
    return {
      primaryUrl: `${base}/svc`,
      replicaUrl,
      async onReplica(sql) {
        const client = new pg.Client({ connectionString: replicaUrl });
        await client.connect();
        try {
          return await client.query(sql);
        } finally {
          await client.end();
        }
      },
      destroy,
    };
  } catch (error) {
    await destroy();
    throw error;
  }
}
