/**
 * The service's Prometheus figures, one registry per process: HTTP requests of every route
 * (by method, route template and status), and what the business does — orders created,
 * settlements, keys assigned and short, webhook attempts by outcome, the webhook lag, rate-limit
 * rejections, plus gauges read when /metrics is scraped (due attempts, database pool in use).
 * Counters are bumped where the thing happens, after its transaction returned.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const ordersCreated = new Counter({
  name: 'svc_orders_created_total',
  help: 'Orders created by checkout, embed checkout and orders/create',
  registers: [registry],
});

export const settlements = new Counter({
  name: 'svc_settlements_total',
  help: 'Payment settlements, by outcome (settled, already_settled, amount_mismatch, ...)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const keysAssigned = new Counter({
  name: 'svc_license_keys_assigned_total',
  help: 'License keys assigned to paid orders',
  registers: [registry],
});

export const keyShortages = new Counter({
  name: 'svc_license_key_shortages_total',
  help: 'Fulfilments that found fewer keys in stock than the order needs (the order waits in processing)',
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: 'svc_webhook_attempts_total',
  help: 'Webhook attempts, by outcome (success, failed, skipped)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const webhookLag = new Histogram({
  name: 'svc_webhook_lag_seconds',
  help: "Time from an event's commit to the start of its first attempt",
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const rateLimited = new Counter({
  name: 'svc_rate_limit_rejections_total',
  help: 'Requests refused with 429, by rate-limit rule (one per limited route, merchant per key)',
  labelNames: ['route'] as const,
  registers: [registry],
});

export const webhookQueueDepth = new Gauge({
  name: 'svc_webhook_due_attempts',
  help: 'Webhook attempts queued and due now (read at scrape time)',
  registers: [registry],
});

export const dbPoolInUse = new Gauge({
  name: 'svc_db_pool_connections_in_use',
  help: 'Database connections of this process in use (read at scrape time)',
  registers: [registry],
});

export const dbPoolPending = new Gauge({
  name: 'svc_db_pool_pending_acquires',
  help: 'Requests of this process waiting for a database connection (read at scrape time)',
  registers: [registry],
});
