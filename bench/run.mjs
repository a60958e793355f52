#!/usr/bin/env node
/**
 * Benchmarks (not tests: they print figures). `node bench/run.mjs [name...]` runs the
 * named benchmarks, or all of them but the opt-in ones (the soak), one after another,
 * each cleaning up after itself (child processes stopped, databases dropped, temp dirs
 * removed, Redis keys under its own prefix deleted), also on failure,
 * Ctrl-C or when the time budget (BENCH_BUDGET_S, default the sum of the selected
 * benchmarks' `budgetS`, 600 s each when not given) is spent.
 */
import { assertBuilt, REPO_ROOT, SERVER_DIST } from './lib/service.mjs';
import { cleanupAll, installExitHandlers } from './lib/cleanup.mjs';
import { heading } from './lib/format.mjs';
import { describeBuild, describeMachine } from './lib/machine.mjs';
import cart from './cart.mjs';
import checkout from './checkout.mjs';
import cluster from './cluster.mjs';
import dashboard from './dashboard.mjs';
import imageMemory from './image-memory.mjs';
import licenses from './licenses.mjs';
import lighthouse from './lighthouse.mjs';
import ordersPaging from './orders-paging.mjs';
import ormExceptions from './orm-exceptions.mjs';
import rateLimiter from './rate-limiter.mjs';
import renewals from './renewals.mjs';
import settlement from './settlement.mjs';
import soak from './soak.mjs';
import storage from './storage.mjs';
import storefront from './storefront.mjs';
import subscriptionFigures from './subscription-figures.mjs';
import webhooks from './webhooks.mjs';

// `optIn` benchmarks (the 10-minute soak) run only when named: node bench/run.mjs soak.
const BENCHMARKS = [
  ordersPaging,
  cart,
  checkout,
  settlement,
  webhooks,
  licenses,
  renewals,
  subscriptionFigures,
  cluster,
  rateLimiter,
  ormExceptions,
  dashboard,
  storefront,
  lighthouse,
  imageMemory,
  storage,
  soak,
];

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h') || args.includes('--list')) {
  console.log('usage: node bench/run.mjs [name...]   (npm run bench -- [name...])\n\nbenchmarks:');
  for (const bench of BENCHMARKS)
    console.log(`  ${bench.name.padEnd(16)} ${bench.optIn ? '(opt-in, only when named) ' : ''}${bench.measures}`);
  process.exit(0);
}
const unknown = args.filter((name) => !BENCHMARKS.some((bench) => bench.name === name));
if (unknown.length > 0) {
  console.error(
    `unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((bench) => bench.name).join(', ')}`,
  );
  process.exit(2);
}
const selected =
  args.length > 0
    ? BENCHMARKS.filter((bench) => args.includes(bench.name))
    : BENCHMARKS.filter((bench) => !bench.optIn);

try {
  assertBuilt();
} catch (error) {
  console.error(error.message);
  process.exit(2);
}

// The hard time limit of the whole run: BENCH_BUDGET_S, else the sum of the selected
// benchmarks' own limits (`budgetS`, 600 s for one that names none).
const budgetS = Number(process.env.BENCH_BUDGET_S ?? selected.reduce((sum, bench) => sum + (bench.budgetS ?? 600), 0));
const clearDeadline = installExitHandlers({ deadlineMs: budgetS * 1000 });

const machine = await describeMachine();
console.log(`machine: ${machine.cpus} CPUs (${machine.cpu}), ${machine.memoryGiB} GiB RAM, ${machine.kernel}`);
console.log(`node ${machine.node}, PostgreSQL ${machine.postgres} (${machine.postgresSettings})`);
const build = describeBuild(REPO_ROOT, SERVER_DIST);
console.log(`server build: apps/server/dist (newest .js ${build.distBuiltAt}), git HEAD ${build.head}`);

let failures = 0;
for (const bench of selected) {
  console.log(heading(`${bench.name}: ${bench.title}`));
  try {
    await bench.run();
  } catch (error) {
    failures++;
    console.error(`\n${bench.name} FAILED: ${error?.stack ?? error}`);
  } finally {
    await cleanupAll();
  }
}
clearDeadline();
const after = describeBuild(REPO_ROOT, SERVER_DIST);
if (after.distBuiltAt !== build.distBuiltAt)
  console.log(
    `\nnote: apps/server/dist was rebuilt during the run (newest .js now ${after.distBuiltAt}); a server started after that ran the new build`,
  );
process.exit(failures > 0 ? 1 : 0);
