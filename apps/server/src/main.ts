#!/usr/bin/env node
/**
 * The `svc` command: `svc serve` (HTTP API, webhook dispatcher, scheduled jobs), `svc worker`
 * (the webhook dispatcher alone; run as many as needed), `svc migrate` (apply migrations), and
 * the operator commands of cli.ts (create-user, create-store, create-api-key, ban-store, unban-store).
 */
import { existsSync } from 'node:fs';
import { buildApp } from './app.js';
import { CLI_COMMANDS, UsageError } from './cli.js';
import { startJobs } from './jobs.js';
import { AppError } from './lib/errors.js';
import { ConfigError, loadConfig } from './config.js';
import type { AppDeps } from './deps.js';
import { createLogger, type Logger } from './lib/logger.js';
import { Dispatcher } from './modules/webhooks/dispatcher.js';
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

async function serve(log: Logger): Promise<void> {
  const config = loadConfig();
  const runtime = await startRuntime(config, log);
  const app = await buildApp(runtime.deps);
  const stopJobs = startJobs(runtime.deps);
  let stopDispatcher: (() => Promise<void>) | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    // Requests in flight and webhook attempts in flight finish (the latter within WEBHOOK_TIMEOUT_MS).
    await Promise.all([app.close(), stopDispatcher?.()]);
    await stopJobs();
    await runtime.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  const address = await app.listen({ port: config.port, host: config.host });
  if (!stopping) stopDispatcher = startDispatcher(runtime.deps, log);
  const port = app.server.address();
  log.info({ url: address, port: typeof port === 'object' && port ? port.port : config.port, publicUrl: config.publicUrl }, `svc listening on ${address}`);
}

/** `svc worker`: the webhook dispatcher alone, beside any number of API processes and workers. */
async function worker(log: Logger): Promise<void> {
  const config = loadConfig();
  const runtime = await startRuntime(config, log);
  const stopDispatcher = startDispatcher(runtime.deps, log);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing webhook attempts in flight');
    const force = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    await stopDispatcher();
    await runtime.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  log.info('svc worker delivering webhooks');
}

async function migrateCommand(log: Logger): Promise<void> {
  const config = loadConfig();
  const runtime = await startRuntime(config, log, { migrate: true });
  await runtime.close();
}

function operatorCommand(name: string): (log: Logger) => Promise<void> {
  return async (log) => {
    const command = CLI_COMMANDS[name]!;
    const runtime = await startRuntime(loadConfig(), log);
    try {
      console.log(await command.run(runtime, process.argv.slice(3)));
    } catch (error) {
      if (error instanceof UsageError || error instanceof AppError) {
        console.error(`${error.message}\nusage: ${command.usage}`);
        process.exitCode = 2;
      } else {
        throw error;
      }
    } finally {
      await runtime.close();
    }
  };
}

const COMMANDS: Record<string, (log: Logger) => Promise<void>> = {
  serve,
  worker,
  migrate: migrateCommand,
  ...Object.fromEntries(Object.keys(CLI_COMMANDS).map((name) => [name, operatorCommand(name)])),
};

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const name = process.argv[2] ?? 'serve';
  // Operator commands print their answer; their logs stay quiet unless asked for (not the long-running ones).
  const log = createLogger(process.env.LOG_LEVEL ?? (name === 'serve' || name === 'worker' ? 'info' : 'error'));
  const command = COMMANDS[name];
  if (!command) {
    console.error(`usage: svc <${Object.keys(COMMANDS).join('|')}>`);
    process.exit(2);
  }
  try {
    await command(log);
  } catch (error) {
    if (error instanceof ConfigError) {
      log.fatal(error.message);
    } else {
      log.fatal({ err: error }, `svc ${name} failed`);
    }
    process.exit(1);
  }
}

void main();
