#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=131072 node --max-old-space-size=512
/**
 * The `svc` command: `svc serve` (HTTP API, webhook dispatcher, mail sender, billing engine,
 * scheduled jobs), `svc worker` (the webhook dispatcher, the mail sender and the billing engine;
 * run as many as needed), `svc migrate` (apply migrations), and
 * the operator commands of cli.ts (create-user, create-store, create-api-key, ban-store,
 * unban-store, seed-demo).
 *
 * Arguments are checked before anything starts: a usage mistake exits 2 with the usage line;
 * `svc COMMAND --help` (or `svc help COMMAND`) prints the command's options, read from its one
 * declaration in cli.ts, and starts nothing.
 * Any other failure prints its cause in one sentence and exits 1.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import {
  ALL_COMMANDS,
  CLI_COMMANDS,
  UsageError,
  asksForHelp,
  helpText,
  usageLine,
  type ProcessCommandName,
} from './cli.js';
import { startJobs } from './jobs.js';
import { BillingEngine } from './flows/billing-engine.js';
import { AppError } from './lib/errors.js';
import { describeFailure, isExplained } from './lib/failures.js';
import { loadConfig, type Config } from './config.js';
import type { AppDeps } from './deps.js';
import { createLogger, type Logger } from './lib/logger.js';
import { SmtpTransport } from './lib/mailer.js';
import { MailSender } from './modules/mail/mail-sender.js';
import { Dispatcher } from './modules/webhooks/scheduler.js';
import { connectRedis, startRuntime } from './runtime.js';

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

const PROCESS_RUN: Record<ProcessCommandName, (log: Logger) => Promise<void>> = {
  serve,
  worker,
  migrate: migrateCommand,
};

function usage(): string {
  const rows = Object.entries(ALL_COMMANDS).map(([name, c]) => [name, c.summary] as const);
  const width = Math.max(...rows.map(([name]) => name.length));
  return `usage: svc <command> [options]\n\n${rows.map(([name, summary]) => `  ${name.padEnd(width)}  ${summary}`).join('\n')}\n\nsvc <command> --help shows a command's options and an example.\n`;
}

/** Prints the cause of a failure as a person reads it, and exits. */
function fail(name: string, error: unknown, log: Logger, longRunning: boolean): never {
  const sentence = describeFailure(error);
  // A server's failure goes to its log (with the stack when the sentence may not say it all).
  if (longRunning) log.fatal(isExplained(error) ? {} : { err: error }, `svc ${name} failed: ${sentence}`);
  else console.error(`svc ${name}: ${sentence}`);
  process.exit(1);
}

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  let [name = 'serve', ...args] = process.argv.slice(2);
  // `svc help <command>` is `svc <command> --help`.
  if (name === 'help' && args[0] !== undefined) [name, args] = [args[0], ['--help']];
  else if (name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(usage());
    return;
  }
  const command = Object.hasOwn(ALL_COMMANDS, name) ? ALL_COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`svc: unknown command "${name}"\n${usage()}`);
    process.exit(2);
  }
  // Help first: it starts nothing, whatever else the line says.
  if (asksForHelp(args)) {
    process.stdout.write(helpText(name, command));
    return;
  }
  const processCommand = Object.hasOwn(PROCESS_RUN, name) ? PROCESS_RUN[name as ProcessCommandName] : undefined;
  const operatorCommand = CLI_COMMANDS[name];
  const usageHint = `usage: ${usageLine(name, command)}\n(svc ${name} --help lists the options)\n`;

  // Arguments first: nothing starts for a command called wrongly.
  let input: unknown;
  try {
    input = command.parse(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`svc ${name}: ${error.message}\n${usageHint}`);
    process.exit(2);
  }

  const longRunning = name === 'serve' || name === 'worker';
  // Operator commands print their answer; their logs stay quiet unless asked for.
  const log = createLogger(process.env.LOG_LEVEL ?? (longRunning || name === 'migrate' ? 'info' : 'error'));
  try {
    if (processCommand) {
      await processCommand(log);
      return;
    }
    const runtime = await startRuntime(operatorConfig(), log, { attachEmbedded: true });
    try {
      console.log(await operatorCommand!.run(runtime, input));
    } catch (error) {
      // The command was understood but cannot be done as asked (no such user, store exists...).
      if (!(error instanceof UsageError || error instanceof AppError)) throw error;
      process.stderr.write(`svc ${name}: ${error.message}\n${usageHint}`);
      process.exitCode = 2;
    } finally {
      await runtime.close();
    }
  } catch (error) {
    fail(name, error, log, longRunning);
  }
}

void main();
