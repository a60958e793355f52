/** Creating and dropping throw-away databases on the test PostgreSQL server. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { databaseUrl } from './env.js';

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export async function recreateDatabase(name: string): Promise<string> {
  await admin(async (client) => {
    await client.query(`drop database if exists "${name}" with (force)`);
    await client.query(`create database "${name}"`);
  });
  return databaseUrl(name);
}

export async function dropDatabase(name: string): Promise<void> {
  await admin((client) => client.query(`drop database if exists "${name}" with (force)`));
}

/** A fresh, empty database with a unique name; the server under test migrates it. */
export async function freshDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `svc_test_${randomBytes(5).toString('hex')}`;
  const url = await recreateDatabase(name);
  return { name, url, drop: () => dropDatabase(name) };
}
