#!/usr/bin/env node
/**
 * The `svc` command: `svc serve` (HTTP API), `svc migrate` (apply migrations), and the
 * operator commands of cli.ts (create-user, create-store, create-api-key, ban-store, unban-store).
 */
import { existsSync } from 'node:fs';
import { buildApp } from './app.js';
import { CLI_COMMANDS, UsageError } from './cli.js';
import { startJobs } from './jobs.js';
import { AppError } from './lib/errors.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger, type Logger } from './lib/logger.js';
import { startRuntime } from './runtime.js';

async function serve(log: Logger): Promise<void> {
  const config = loadConfig();
  const runtime = await startRuntime(config, log);
  const app = await buildApp(runtime.deps);
  const stopJobs = startJobs(runtime.deps);
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
    await app.close();
    await stopJobs();
    await runtime.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  const address = await app.listen({ port: config.port, host: config.host });
  const port = app.server.address();
  log.info({ url: address, port: typeof port === 'object' && port ? port.port : config.port, publicUrl: config.publicUrl }, `svc listening on ${address}`);
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
  migrate: migrateCommand,
  ...Object.fromEntries(Object.keys(CLI_COMMANDS).map((name) => [name, operatorCommand(name)])),
};

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const name = process.argv[2] ?? 'serve';
  // Operator commands print their answer; their logs stay quiet unless asked for.
  const log = createLogger(process.env.LOG_LEVEL ?? (name === 'serve' ? 'info' : 'error'));
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
