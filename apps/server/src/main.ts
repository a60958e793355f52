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
import { existsSync } from 'node:fs';
import {
  ALL_COMMANDS,
  CLI_COMMANDS,
  PROCESS_COMMANDS,
  UsageError,
  asksForHelp,
  helpText,
  usageLine,
  type ProcessCommandName,
} from './cli.js';
import { AppError } from './lib/errors.js';
import { describeFailure, isExplained } from './lib/failures.js';
import { createLogger, type Logger } from './lib/logger.js';

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
  const isProcessCommand = Object.hasOwn(PROCESS_COMMANDS, name);
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
    // The server's parts load only now, for a command called rightly.
    const processes = await import('./processes.js');
    if (isProcessCommand) {
      await processes.PROCESS_RUN[name as ProcessCommandName](log);
      return;
    }
    const runtime = await processes.operatorRuntime(log);
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
