#!/usr/bin/env node
/**
 * The `svc` command: `svc serve` (HTTP API) and `svc migrate` (apply migrations).
 * Later capabilities add their own commands here.
 */
import { existsSync } from 'node:fs';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger, type Logger } from './lib/logger.js';
import { startRuntime } from './runtime.js';

async function serve(log: Logger): Promise<void> {
  const config = loadConfig();
  const runtime = await startRuntime(config, log);
  const app = await buildApp(runtime.deps);
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

const COMMANDS: Record<string, (log: Logger) => Promise<void>> = {
  serve,
  migrate: migrateCommand,
};

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const log = createLogger(process.env.LOG_LEVEL ?? 'info');
  const name = process.argv[2] ?? 'serve';
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
