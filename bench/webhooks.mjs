/**
 * webhooks: outgoing webhook delivery by ONE `svc worker` (the built
 * `apps/server/dist/main.js worker`) to a loopback receiver in this process, beside a floor
 * (floors/webhooks-floor.mjs):
 *
 *  1. throughput: 10,000 `order.created` events already in the outbox when the worker starts
 *     (WEBHOOK_POLL_MS=200); timed from the worker's spawn until the database shows 10,000
 *     `success` rows in webhook_delivery (polled every 100 ms): fan-out + claim + send + record;
 *  2. lag: events committed one per transaction at a steady 200/s, each followed by the
 *     PUBLISH on `<REDIS_KEY_PREFIX>events` that the service's own commit hook sends, to a
 *     worker with the default poll (1000 ms), so the wake-up is Redis pub/sub; commit to first
 *     arrival at the receiver, p50/p99/max; controls: 200/s without the PUBLISH (poll only),
 *     and 20/s with and without it;
 *  3. floor: a bare pg + node:http sender doing the same deliveries (same bodies, same signed
 *     headers, 32 at once, one UPDATE per delivery into a table of its own), and once more 4
 *     at once (the dispatcher's per-endpoint limit).
 *
 * The receiver answers 200 at once and checks on every request the X-Service-Signature (hex
 * HMAC-SHA256 of `<t>.<raw body>` with the endpoint's secret), counts deliveries by
 * `x-service-delivery-id` (no duplicates allowed) and events by `x-service-event-id`.
 *
 * Set-up is SQL in a fresh database (migrated by `svc migrate`, without REDIS_URL: with it this
 * build's `svc migrate` does not exit): a user, a store, one webhook whose secret is sealed as
 * the service seals it (AES-256-GCM under deriveKey(APP_ENCRYPTION_KEY, 'webhook-secret'),
 * from the built lib/crypto.js), the events. Its own REDIS_KEY_PREFIX; keys under it are
 * deleted at the end (the worker itself writes none).
 *
 * Knobs: BENCH_WEBHOOK_EVENTS (10000), BENCH_WEBHOOK_POLL_MS (200, the throughput worker's
 * WEBHOOK_POLL_MS), BENCH_WEBHOOK_TIMEOUT_S (180: the most a throughput run may take),
 * BENCH_WEBHOOK_FLOOR_SMALL (1; 0 skips the floor at 4 at once), BENCH_WEBHOOK_LAG_EVENTS
 * (4000; 0 skips the lag runs), BENCH_WEBHOOK_LAG_RATE (200 /s), BENCH_WEBHOOK_POLL_ONLY_EVENTS
 * (1000; 0 skips that control), BENCH_WEBHOOK_LOW_RATE / BENCH_WEBHOOK_LOW_EVENTS (20 / 100;
 * 0 events skips the light pair), BENCH_WORKER_NODE_ARGS (node flags for the workers).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { check } from './lib/check.mjs';
import { onCleanup } from './lib/cleanup.mjs';
import { freshDatabase, watchDatabase, withClient } from './lib/db.mjs';
import { fixed, seconds } from './lib/format.mjs';
import { importDist, REPO_ROOT, SERVER_ENTRY, serviceEnv, tempDir } from './lib/service.mjs';
import { spawnChild, workerEnv } from './webhooks/children.mjs';
import {
  DISPATCHER_PER_ENDPOINT,
  EVENTS,
  FLOOR_CONCURRENCY,
  FLOOR_SMALL,
  LAG_RATE,
  sleep,
  THROUGHPUT_POLL_MS,
  THROUGHPUT_TIMEOUT_S,
  workerNodeArgs,
} from './webhooks/knobs.mjs';
import { lagCases } from './webhooks/lag.mjs';
import { checkReceived, startReceiver } from './webhooks/receiver.mjs';
import { deleteKeysUnder, redisClient } from './webhooks/redis.mjs';
import { printFigures } from './webhooks/report.mjs';
import { seedEndpoint, seedEvents } from './webhooks/seed.mjs';
import { deliveryRun } from './webhooks/throughput.mjs';

export default {
  name: 'webhooks',
  title: `Webhook delivery by one worker: ${EVENTS.toLocaleString('en-US')} events to a loopback receiver, lag at ${LAG_RATE}/s, vs a bare sender`,
  measures: `svc worker: deliveries/s for ${EVENTS.toLocaleString('en-US')} queued events, commit-to-delivery lag at ${LAG_RATE} events/s (Redis wake-up), against a bare pg + http sender`,
  budgetS: 420,

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-webhooks-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    const redisKeyPrefix = `svc:bench:${randomBytes(4).toString('hex')}:`;
    const channel = `${redisKeyPrefix}events`;
    const redis = await redisClient();
    onCleanup(`delete Redis keys ${redisKeyPrefix}*`, () => deleteKeysUnder(redis, redisKeyPrefix));
    console.log(`database ${db.name}, Redis prefix ${redisKeyPrefix} (wake-up channel ${channel})`);
    // The service's process environment (PROCESS_ENV, as `npm start` sets it) under the worker's own.
    const processEnv = await serviceEnv();
    const env = (pollMs) => ({
      ...processEnv,
      ...workerEnv({ db, encryptionKey, dataDir: workDir, redisKeyPrefix, pollMs }),
    });

    // 1. Schema: `svc migrate`, then the endpoint and the events, in SQL. Without REDIS_URL:
    // migrations do not use Redis, and with it this build's `svc migrate` never exits (the
    // Redis client it connects in the background keeps the process alive).
    const { REDIS_URL: _unused, ...migrateEnv } = env();
    const migrating = spawnChild({
      label: 'svc migrate',
      script: SERVER_ENTRY,
      args: ['migrate'],
      env: { ...migrateEnv, LOG_LEVEL: 'info' },
      logFile: path.join(workDir, 'migrate.log'),
    });
    const migrated = await Promise.race([migrating.exited, sleep(120_000).then(() => 'timeout')]);
    check(migrated === 0, `svc migrate exited ${migrated}; log:\n${migrating.log().slice(-3000)}`);
    await migrating.stop();
    const { newWebhookSecret } = await importDist('modules/webhooks/signing.js');
    const secret = newWebhookSecret();
    const hooks = await startReceiver(secret);
    const endpoint = await seedEndpoint(db.url, encryptionKey, hooks.url, secret);
    const seedStarted = Date.now();
    const events = await seedEvents(db.url, endpoint.storeId, EVENTS, endpoint.newId);
    await withClient(db.url, (client) => client.query('vacuum analyze event'));
    console.log(
      `store ${endpoint.storeId}, webhook ${endpoint.webhookId} -> ${hooks.url} (order.created, secret ${endpoint.secret.slice(0, 12)}...); ` +
        `${EVENTS.toLocaleString('en-US')} events in one insert (${fixed(events.bytes, 0)} B payload each) in ${seconds(Date.now() - seedStarted)}`,
    );

    const workerArgs = await workerNodeArgs();
    const watch = await watchDatabase(db.name);
    const pgClient = new pg.Client({ connectionString: db.url });
    await pgClient.connect();
    const closePgClient = onCleanup('close bench pg client', () => pgClient.end());

    // 2. Throughput: one worker, every event already queued in the outbox.
    process.stdout.write(
      `  worker (WEBHOOK_POLL_MS=${THROUGHPUT_POLL_MS}), ${EVENTS.toLocaleString('en-US')} events ... `,
    );
    const worker = await deliveryRun({
      name: 'svc worker',
      receiver: hooks,
      start: () =>
        spawnChild({
          label: 'svc worker',
          script: SERVER_ENTRY,
          args: ['worker'],
          nodeArgs: workerArgs,
          env: env(THROUGHPUT_POLL_MS),
          logFile: path.join(workDir, 'worker.log'),
        }),
      watch,
      countSql: `select count(*) filter (where status = 'success')::int as ok, count(*) filter (where status = 'failed')::int as failed from webhook_delivery`,
      countParams: [],
      pgClient,
    });
    console.log(
      `${fixed(worker.rate, 0)} deliveries/s (${fixed(worker.elapsedS, 2)} s from spawn${worker.complete ? '' : `, INCOMPLETE: ${worker.delivered} after ${THROUGHPUT_TIMEOUT_S} s`})`,
    );
    const workerDb = (
      await pgClient.query(
        `select (select count(*)::int from event where dispatched_at is null) as undispatched,
                (select count(*)::int from webhook_delivery) as deliveries,
                (select count(distinct event_id)::int from webhook_delivery) as events,
                (select json_object_agg(status, n) from (select status, count(*)::int as n from webhook_delivery group by status) s) as by_status,
                (select failure_count from webhook where id = $1) as failure_count`,
        [endpoint.webhookId],
      )
    ).rows[0];
    const workerProblems = worker.child.lines().filter((line) => line.level >= 40);
    await worker.child.stop();
    if (worker.complete) checkReceived(worker, events.ids, 'worker');

    // 3. The floor: same events, same bodies and headers, same receiver, 32 at once.
    await pgClient.query(
      `create table floor_delivery (id varchar(48) primary key, event_id varchar(40) not null, status text not null, response_code integer null,
         response_body_preview varchar(1024) null, error_message varchar(500) null, duration_ms integer null, created_at timestamptz not null, updated_at timestamptz not null)`,
    );
    const floorRun = async (concurrency, label) => {
      await pgClient.query('truncate floor_delivery');
      process.stdout.write(`  ${label} ... `);
      const run = await deliveryRun({
        name: label,
        receiver: hooks,
        start: () =>
          spawnChild({
            label,
            script: path.join(REPO_ROOT, 'bench/floors/webhooks-floor.mjs'),
            env: {
              FLOOR_DATABASE_URL: db.url,
              FLOOR_STORE_ID: endpoint.storeId,
              FLOOR_SECRET: endpoint.secret,
              FLOOR_RECEIVER_URL: hooks.url,
              FLOOR_CONCURRENCY: String(concurrency),
              NODE_ENV: 'production',
            },
            logFile: path.join(workDir, `floor-${concurrency}.log`),
          }),
        watch,
        countSql: `select count(*) filter (where status = 'success')::int as ok, count(*) filter (where status = 'failed')::int as failed from floor_delivery`,
        countParams: [],
        pgClient,
      });
      const done = run.child.lines().find((line) => line.msg === 'floor done');
      await run.child.stop();
      console.log(`${fixed(run.rate, 0)} deliveries/s (${fixed(run.elapsedS, 2)} s from spawn)`);
      if (run.complete) checkReceived(run, events.ids, label);
      // The same bytes as the worker sent, event by event.
      run.sameBodies = events.ids.filter(
        (id) => worker.phase.bodyHashes.get(id) === run.phase.bodyHashes.get(id),
      ).length;
      run.done = done;
      return run;
    };
    const floor = await floorRun(FLOOR_CONCURRENCY, `floor, ${FLOOR_CONCURRENCY} at once`);
    const floorSmall = FLOOR_SMALL
      ? await floorRun(DISPATCHER_PER_ENDPOINT, `floor, ${DISPATCHER_PER_ENDPOINT} at once`)
      : undefined;

    // 4. Lag: a fresh worker with the default poll (1000 ms); wake-ups through Redis pub/sub.
    const { lagRuns, lagInfo } = await lagCases({
      hooks,
      watch,
      redis,
      channel,
      db,
      endpoint,
      env,
      workerArgs,
      workDir,
      pgClient,
    });

    await watch.close();
    await hooks.close();
    await closePgClient();
    await db.drop();
    const redisLeft = await deleteKeysUnder(redis, redisKeyPrefix);

    // 5. Figures.
    const { throughput, ratios } = printFigures({
      worker,
      floor,
      floorSmall,
      workerDb,
      workerProblems,
      lagRuns,
      lagInfo,
      channel,
    });
    console.log(`Redis keys left under ${redisKeyPrefix} at the end: ${redisLeft} deleted`);
    console.log(`\nwebhooks took ${seconds(Date.now() - started)}`);

    check(worker.complete, `the worker delivered ${worker.delivered} of ${EVENTS} within ${THROUGHPUT_TIMEOUT_S} s`);
    check(floor.complete && (!floorSmall || floorSmall.complete), 'the floor delivered every event');
    for (const run of lagRuns) {
      check(run.received === run.count, `${run.name}: ${run.received} of ${run.count} events arrived`);
      check(
        run.phase.badSignatures === 0 && run.phase.duplicateDeliveries === 0 && run.phase.repeatedEvents === 0,
        `${run.name}: bad signatures or duplicates`,
      );
    }
    return { throughput, lag: lagRuns, ratios };
  },
};
