/**
 * The soak's end: the answers still in flight, the settlements they cause and the webhook
 * deliveries, waited for (at most DRAIN_S); then what the database and the service hold.
 */
import { performance } from 'node:perf_hooks';
import { withClient } from '../lib/db.mjs';
import { memoryOf } from '../lib/proc.mjs';
import { problemsAfterStart } from '../lib/service.mjs';
import { DRAIN_S, WEBHOOK_EVENTS, sleep } from './knobs.mjs';

export async function drain({ load, sampling, shop, db, service, watch, receiverState }) {
  const { tick, pending, settleQueue } = load;
  const { storeId, webhookCreatedAt } = shop;
  const { windows } = sampling;
  const drainStarted = performance.now();
  while (performance.now() - drainStarted < DRAIN_S * 1000 && (pending.size > 0 || settleQueue.length > 0)) {
    tick();
    await Promise.race([Promise.all([...pending]), sleep(200)]);
  }
  const expectedEvents = async () =>
    withClient(db.url, async (client) => {
      const { rows } = await client.query(
        `select e.type, count(*)::int as n from event e where e.store_id = $1 and e.type = any($2) and e.created_at >= $3 group by e.type order by e.type`,
        [storeId, WEBHOOK_EVENTS, webhookCreatedAt],
      );
      return Object.fromEntries(rows.map((row) => [row.type, row.n]));
    });
  let expected = await expectedEvents();
  const expectedTotal = () => Object.values(expected).reduce((sum, n) => sum + n, 0);
  while (performance.now() - drainStarted < DRAIN_S * 1000 && receiverState.events.size < expectedTotal()) {
    await sleep(500);
    expected = await expectedEvents();
  }
  const drainMs = performance.now() - drainStarted;
  // A late window for what arrived during the drain.
  const drainWindow = load.window;
  await sampling.stopRss();
  const deliveryRows = await withClient(
    db.url,
    async (client) =>
      (
        await client.query(
          `select status, count(*)::int as n from webhook_delivery where webhook_id = $1 group by status order by status`,
          [shop.webhookId],
        )
      ).rows,
  );
  const undelivered = await withClient(
    db.url,
    async (client) =>
      (
        await client.query(
          `select e.id, e.type, e.created_at from event e where e.store_id = $1 and e.type = any($2) and e.created_at >= $3
           and not exists (select 1 from webhook_delivery d where d.event_id = e.id and d.status = 'success') order by e.created_at limit 5`,
          [storeId, WEBHOOK_EVENTS, webhookCreatedAt],
        )
      ).rows,
  );
  const tableCounts = await withClient(
    db.url,
    async (client) =>
      (
        await client.query(
          `select (select count(*)::int from "order" where store_id = $1) as orders, (select count(*)::int from event where store_id = $1) as events, (select count(*)::int from webhook_delivery) as deliveries, pg_size_pretty(pg_database_size(current_database())) as db_size`,
          [storeId],
        )
      ).rows[0],
  );
  await watch.close();
  const hwm = memoryOf(service.pid).hwmMiB;
  const serviceLogs = service.logs();
  const serviceProblems = problemsAfterStart(serviceLogs);
  const serverCpuSeconds = windows.reduce((sum, row) => sum + row.cpu.serverCpuSeconds, 0);
  const postgresCpuSeconds = windows.reduce((sum, row) => sum + row.cpu.postgresCpuSeconds, 0);
  return {
    expected,
    expectedTotal,
    drainMs,
    drainWindow,
    deliveryRows,
    undelivered,
    tableCounts,
    hwm,
    serviceProblems,
    serverCpuSeconds,
    postgresCpuSeconds,
  };
}
