/**
 * soak (opt-in: `node bench/run.mjs soak`): one `svc serve` (HTTP + webhook dispatcher) under
 * a fixed, mixed, open-loop request rate for BENCH_SOAK_S seconds (600), sampled every
 * BENCH_SOAK_SAMPLE_S (10):
 *
 *   catalog     GET  /api/stores/by-subdomain/{subdomain}/storefront
 *   cart        GET  /api/v1/cart?storeId=&cart=<3-5 lines>
 *   checkout    POST /api/v1/checkout (one line; a license-key product and a manual one in turn)
 *   settlement  POST /api/payments/test/webhook, signed payment.succeeded for each order a
 *               checkout made, one second after its answer (so as many as checkouts)
 *   merchant    GET  /api/merchant/v1/stores/{storeId}/orders?limit=20 and .../orders/{recent id}
 *   limited     POST /api/coupons/validate from one address, above its budget of 20/min: the
 *               intended 429s
 *   webhooks    the dispatcher's deliveries of order.created / .paid / .completed to a
 *               receiver in this process (signature checked, lag = arrival - event createdAt)
 *
 * Requests are issued on a fixed schedule (open loop: the next request goes out when it is due,
 * whether or not earlier ones were answered; latency counts from the due time's issue, so a slow
 * server cannot hide behind its own slowness), each kind from its own keep-alive agent on a
 * random 127.x source address. Every window prints requests by status per kind, p50 / p99 of
 * the window, the server's RSS (VmRSS from /proc, sampled every second), its CPU and that of
 * PostgreSQL and of other processes, webhook deliveries received and their lag.
 *
 * The verdict: errors other than the intended 429s (count and first examples; any makes the
 * run fail), RSS growth after warm-up (BENCH_SOAK_WARMUP_S, 60: the mean of the last third of
 * the windows after it against the first third; flagged above 10 %; and, since RSS is a
 * sawtooth between major GCs, the lowest sample of each third as well), peak RSS against the
 * 250 MB target (issue 19), and every webhook event delivered exactly once with a good signature.
 *
 * Knobs: BENCH_SOAK_S (600), BENCH_SOAK_RATE (50 requests/s in all), BENCH_SOAK_SAMPLE_S (10),
 * BENCH_SOAK_WARMUP_S (60; at most a third of the run), BENCH_SOAK_DRAIN_S (60: the most the
 * end may wait for answers and deliveries).
 */
import { randomBytes } from 'node:crypto';
import { freshDatabase, watchDatabase } from './lib/db.mjs';
import { seconds } from './lib/format.mjs';
import { startService, tempDir } from './lib/service.mjs';
import { drain } from './soak/drain.mjs';
import { requestKinds } from './soak/kinds.mjs';
import { PUBLIC_URL, RATE, RSS_TARGET_MB, SAMPLE_S, SOAK_S } from './soak/knobs.mjs';
import { startLoad } from './soak/load.mjs';
import { newReceiverState, startReceiver } from './soak/receiver.mjs';
import { report } from './soak/report.mjs';
import { provisionShop } from './soak/shop.mjs';
import { sampleWindows } from './soak/windows.mjs';

export default {
  name: 'soak',
  /** Opt-in: not part of `npm run bench` without names; `node bench/run.mjs soak`. */
  optIn: true,
  budgetS: SOAK_S + 300,
  title: `Soak: ${RATE} req/s mixed for ${SOAK_S} s (catalog, cart, checkout, settlement, merchant reads, intended 429s, webhook deliveries)`,
  measures: `${SOAK_S} s at ${RATE} req/s fixed rate (BENCH_SOAK_S, BENCH_SOAK_RATE): errors by status, p99 and RSS every ${SAMPLE_S} s, webhook lag; RSS growth after warm-up and peak vs ${RSS_TARGET_MB} MB`,

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-soak-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    const gatewaySecret = randomBytes(24).toString('hex');
    console.log(`database ${db.name}`);

    // 1. The receiver, the service, a seller with a store, products, keys and a webhook.
    const receiverState = newReceiverState();
    const receiver = await startReceiver(receiverState);
    const service = await startService({
      databaseUrl: db.url,
      encryptionKey,
      dataDir: workDir,
      env: { TEST_GATEWAY_SECRET: gatewaySecret, PUBLIC_URL },
    });
    console.log(
      `service pid ${service.pid} on ${service.url} (started in ${seconds(Date.now() - started)}); webhook receiver on 127.0.0.1:${receiver.port}`,
    );
    const shop = await provisionShop({ service, db, receiver, receiverState });

    // 2. What each kind sends.
    const kinds = await requestKinds({ service, shop });

    // 3. The load, and sampling: RSS every second, a window every SAMPLE_S.
    const load = startLoad({ service, gatewaySecret, receiverState, ...kinds });
    const watch = await watchDatabase(db.name);
    const sampling = await sampleWindows({ service, watch, load });
    await load.stopTicker();
    load.tick(); // anything due at the very end, and the settlements still queued, go out now

    // 4. Drain: answers still in flight, the settlements they cause, and the deliveries.
    const ended = await drain({ load, sampling, shop, db, service, watch, receiverState });
    await service.stop();
    await receiver.close();
    await db.drop();

    // 5. Figures.
    const { problems, kindRows, growth, floorGrowth, peakMiB, hwm } = report({
      load,
      windows: sampling.windows,
      ended,
      receiverState,
      counters: kinds.counters,
    });
    for (const problem of problems) console.log(`!! ${problem}`);
    console.log(`\nsoak took ${seconds(Date.now() - started)}`);
    if (problems.length > 0) throw new Error(`${problems.length} check(s) failed; the soak cannot be trusted as run`);
    return { windows: sampling.windows, kindRows, growth, floorGrowth, peakMiB, hwm, errors: load.errors };
  },
};
