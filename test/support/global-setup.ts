/**
 * Gives every vitest worker its own database, migrated with the real migrations, before
 * any test runs, and drops them afterwards. Names carry a per-run suffix, so two test runs
 * on the same PostgreSQL do not touch each other's databases. Black-box tests additionally
 * make a fresh database per server they start.
 */
import { randomBytes } from 'node:crypto';
import { migrate, openOrm } from '../../apps/server/src/db/orm.js';
import { dropDatabase, recreateDatabase } from './databases.js';
import { MAX_WORKERS, workerDatabaseName } from './env.js';

export default async function setup(): Promise<() => Promise<void>> {
  // Read by the workers (forked after this runs) through workerDatabaseUrl().
  process.env.SVC_TEST_RUN = randomBytes(4).toString('hex');
  const names = Array.from({ length: MAX_WORKERS }, (_, i) => workerDatabaseName(i + 1));
  for (const name of names) {
    const url = await recreateDatabase(name);
    const orm = await openOrm(url, { poolMax: 2 });
    try {
      await migrate(orm);
    } finally {
      await orm.close();
    }
  }
  return async () => {
    for (const name of names) await dropDatabase(name).catch(() => undefined);
  };
}
