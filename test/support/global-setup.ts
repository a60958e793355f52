/**
 * Gives every vitest worker its own database, migrated with the real migrations, before
 * any test runs. Black-box tests additionally make a fresh database per server they start.
 */
import { migrate, openOrm } from '../../apps/server/src/db/orm.js';
import { recreateDatabase } from './databases.js';
import { MAX_WORKERS } from './env.js';

export default async function setup(): Promise<void> {
  for (let worker = 1; worker <= MAX_WORKERS; worker++) {
    const url = await recreateDatabase(`svc_test_w${worker}`);
    const orm = await openOrm(url, { poolMax: 2 });
    try {
      await migrate(orm);
    } finally {
      await orm.close();
    }
  }
}
