/**
 * What the `svc` commands run once their arguments are understood (main.ts): `svc serve`,
 * `svc worker`, `svc migrate`, and the runtime an operator command of cli.ts runs against.
 * main.ts loads this module only then, so `--help` and a usage mistake load none of the server
 * (the ORM, Redis, fastify): they answer in a fraction of the time.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ProcessCommandName } from './cli.js';
import { startJobs } from './jobs.js';
import { BillingEngine } from './flows/billing-engine.js';
import { loadConfig, type Config } from './config.js';
import type { AppDeps } from './deps.js';
import type { Logger } from './lib/logger.js';
import { SmtpTransport } from './lib/mailer.js';
import { MailSender } from './modules/mail/mail-sender.js';
import { Dispatcher } from './modules/webhooks/scheduler.js';
import { connectRedis, startRuntime, type Runtime } from './runtime.js';

/** Starts a webhook dispatcher (with its own Redis connections for wake-ups); returns what stops it. */
function startDispatcher(deps: AppDeps, log: Logger): () => Promise<void> {
  const redis = deps.config.redisUrl ? connectRedis(deps.config.redisUrl, log) : undefined;
  const dispatcher = new Dispatcher(deps, { redis });
  dispatcher.start();
  return async () => {
    await dispatcher.stop();
    await redis?.shutdown();
  };
}

/** Starts a billing engine (subscriptions' renewals, dunning and schedules); returns what stops it. */
function startBillingEngine(deps: AppDeps): () => Promise<void> {
  const engine = new BillingEngine(deps);
  engine.start();
  return () => engine.stop();
}

/** With SMTP_URL, starts a mail sender (the outbox's mail to SMTP); returns what stops it. */
function startMailSender(deps: AppDeps): () => Promise<void> {
  if (!deps.config.smtpUrl) return () => Promise.resolve();
  const sender = new MailSender(deps, new SmtpTransport(deps.config.smtpUrl, deps.config.mailFrom));
  sender.start();
  return () => sender.stop();
}

/** SIGTERM/SIGINT run `stop` once; a stop that hangs past 15 s exits anyway. */
function onSignals(log: Logger, what: string, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `shutting down: finishing ${what}`);
    const force = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    await stop();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void handle('SIGTERM'));
  process.on('SIGINT', () => void handle('SIGINT'));
}

/** `<DATA_DIR>/serve.json`: where the running `svc serve` answers, for the operator commands run beside it. */
const serverFile = (config: Config) => path.join(config.dataDir, 'serve.json');

/** The configuration of an operator command: the running server's public URL unless PUBLIC_URL says otherwise. */
function operatorConfig(): Config {
  const config = loadConfig();
  if (process.env.PUBLIC_URL || !existsSync(serverFile(config))) return config;
  try {
    const { pid, publicUrl } = JSON.parse(readFileSync(serverFile(config), 'utf8')) as {
      pid: number;
      publicUrl: string;
    };
    process.kill(pid, 0);
    return { ...config, publicUrl };
  } catch {
    return config; // not running any more
  }
}

/**
 * Fastify logs "Server listening at <address>" once per address (every interface for 0.0.0.0) and
 * has no option to leave it out (fastify/help#641): its own logger, a child of ours, is silent
 * for the listen call, and `svc serve` says where it listens in one line of its own.
 */
async function listenQuietly(app: FastifyInstance, options: { port: number; host: string }): Promise<string> {
  const level = app.log.level;
  app.log.level = 'silent';
  try {
    return await app.listen(options);
  } finally {
    app.log.level = level;
  }
}

async function serve(log: Logger): Promise<void> {
  const config = loadConfig();
  const runtime = await startRuntime(config, log);
  // Loaded here: the worker and the operator commands need none of the HTTP application.
  const { buildApp } = await import('./app.js');
  const { metricsApp } = await import('./http/ops.js');
  const app = await buildApp(runtime.deps);
  const metrics = config.metricsPort === undefined ? undefined : await metricsApp(runtime.deps);
  const stopJobs = startJobs(runtime.deps);
  let stopDispatcher: (() => Promise<void>) | undefined;
  let stopMailSender: (() => Promise<void>) | undefined;
  let stopBilling: (() => Promise<void>) | undefined;
  let stopping = false;
  onSignals(log, 'requests in flight', async () => {
    stopping = true;
    // Requests, webhook attempts and mail in flight finish (within WEBHOOK_TIMEOUT_MS and the SMTP budgets).
    await Promise.all([app.close(), metrics?.close(), stopDispatcher?.(), stopMailSender?.(), stopBilling?.()]);
    await stopJobs();
    await runtime.close();
    rmSync(serverFile(config), { force: true });
  });
  const address = await listenQuietly(app, { port: config.port, host: config.host });
  const port = (app.server.address() as AddressInfo).port;
  const publicUrl = process.env.PUBLIC_URL ? config.publicUrl : `http://localhost:${port}`;
  // Loopback only: whatever reaches the API port never reaches this one.
  const metricsUrl = metrics
    ? `${await listenQuietly(metrics, { port: config.metricsPort!, host: '127.0.0.1' })}/metrics`
    : undefined;
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(serverFile(config), JSON.stringify({ pid: process.pid, publicUrl }), { mode: 0o600 });
  if (!stopping) {
    stopDispatcher = startDispatcher(runtime.deps, log);
    stopMailSender = startMailSender(runtime.deps);
    stopBilling = startBillingEngine(runtime.deps);
  }
  log.info(
    {
      url: address,
      port,
      publicUrl,
      dashboard: `${publicUrl}/dashboard/`,
      docs: `${publicUrl}/docs`,
      ...(metricsUrl && { metricsUrl }),
    },
    `svc listening on ${address}; dashboard at ${publicUrl}/dashboard/; API reference at ${publicUrl}/docs${metricsUrl ? `; metrics at ${metricsUrl}` : ''}`,
  );
  if (config.isProduction && !metricsUrl && !config.metricsToken)
    log.warn('/metrics is off: set METRICS_TOKEN (scrape the API port with it) or METRICS_PORT (scrape 127.0.0.1)');
}

/** `svc worker`: the webhook dispatcher, the mail sender and the billing engine, beside any number of API processes and workers. */
async function worker(log: Logger): Promise<void> {
  const config = loadConfig();
  const runtime = await startRuntime(config, log);
  const stopDispatcher = startDispatcher(runtime.deps, log);
  const stopMailSender = startMailSender(runtime.deps);
  const stopBilling = startBillingEngine(runtime.deps);
  onSignals(log, 'webhook attempts, mail and charges in flight', async () => {
    await Promise.all([stopDispatcher(), stopMailSender(), stopBilling()]);
    await runtime.close();
  });
  log.info({ mail: config.smtpUrl ? 'sending' : 'kept' }, 'svc worker delivering webhooks');
}

async function migrateCommand(log: Logger): Promise<void> {
  const runtime = await startRuntime(loadConfig(), log, { migrate: true, attachEmbedded: true });
  await runtime.close();
}

export const PROCESS_RUN: Record<ProcessCommandName, (log: Logger) => Promise<void>> = {
  serve,
  worker,
  migrate: migrateCommand,
};

/** The runtime an operator command runs against: the configured database, or a running server's embedded one. */
export function operatorRuntime(log: Logger): Promise<Runtime> {
  return startRuntime(operatorConfig(), log, { attachEmbedded: true });
}
