/** The soak's knobs (environment) and constants, read once; see ../soak.mjs. */

export const SOAK_S = Number(process.env.BENCH_SOAK_S ?? 600);
export const RATE = Number(process.env.BENCH_SOAK_RATE ?? 50);
export const SAMPLE_S = Number(process.env.BENCH_SOAK_SAMPLE_S ?? 10);
export const WARMUP_S = Math.min(Number(process.env.BENCH_SOAK_WARMUP_S ?? 60), Math.floor(SOAK_S / 3));
export const DRAIN_S = Number(process.env.BENCH_SOAK_DRAIN_S ?? 60);
export const RSS_TARGET_MB = 250; // issue 19 (issue 9 said 300)
export const RSS_GROWTH_LIMIT = 0.1;
export const PUBLIC_URL = 'https://shop.bench.test';
/** Shares of RATE; settlements follow checkouts one for one, so they take the checkout share again. */
export const MIX = {
  catalog: 0.24,
  cart: 0.24,
  checkout: 0.12,
  merchantList: 0.12,
  merchantOrder: 0.12,
  limited: 0.04,
};
export const KINDS = ['catalog', 'cart', 'checkout', 'settlement', 'merchantList', 'merchantOrder', 'limited'];
export const SETTLE_AFTER_MS = 1000;
/** In flight per kind beyond which a due request is not sent but counted as an error (the server is not keeping up). */
export const MAX_IN_FLIGHT = 256;
export const REQUEST_TIMEOUT_MS = 30_000;
export const WEBHOOK_EVENTS = ['order.created', 'order.paid', 'order.completed'];

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const mean = (values) => values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);
