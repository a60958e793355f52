/** The webhooks benchmark's knobs (environment) and constants, read once; see ../webhooks.mjs. */
import { performance } from 'node:perf_hooks';
import { serviceNodeArgs } from '../lib/service.mjs';

export const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
export const LAG_EVENTS = Number(process.env.BENCH_WEBHOOK_LAG_EVENTS ?? 4_000);
export const LAG_RATE = Number(process.env.BENCH_WEBHOOK_LAG_RATE ?? 200);
export const POLL_ONLY_EVENTS = Number(process.env.BENCH_WEBHOOK_POLL_ONLY_EVENTS ?? 1_000);
/** A light stream as well (BENCH_WEBHOOK_LOW_RATE /s, BENCH_WEBHOOK_LOW_EVENTS events, with and without PUBLISH): the wake-up path on an idle worker. */
export const LOW_RATE = Number(process.env.BENCH_WEBHOOK_LOW_RATE ?? 20);
export const LOW_RATE_EVENTS = Number(process.env.BENCH_WEBHOOK_LOW_EVENTS ?? 100);
export const THROUGHPUT_TIMEOUT_S = Number(process.env.BENCH_WEBHOOK_TIMEOUT_S ?? 180);
export const FLOOR_SMALL = process.env.BENCH_WEBHOOK_FLOOR_SMALL !== '0';
export const THROUGHPUT_POLL_MS = Number(process.env.BENCH_WEBHOOK_POLL_MS ?? 200);
/** Node flags for the worker processes: svc's own (lib/service.mjs), then BENCH_WORKER_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof". */
export const workerNodeArgs = () => serviceNodeArgs(process.env.BENCH_WORKER_NODE_ARGS);
/** An inter-arrival gap at least this long counts as a pause of the sender. */
export const PAUSE_MS = 50;
export const FLOOR_CONCURRENCY = 32;
/** The dispatcher's defaults (scheduler.ts, Dispatcher constructor): 32 in flight, at most 4 per endpoint. */
export const DISPATCHER_PER_ENDPOINT = 4;
/** Unmeasured events before the lag run, at the same rate, so a fresh worker's first (cold) passes do not count. */
export const LAG_WARMUP_EVENTS = LAG_RATE;

export const wall = () => performance.timeOrigin + performance.now();
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
