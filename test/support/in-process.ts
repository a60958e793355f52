/**
 * An application built in this process (so tests can hand it a clock, a limiter or a
 * router of their own), listening on a free loopback port and spoken to over real HTTP.
 */
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AnyRouter } from '@trpc/server';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { buildApp } from '../../apps/server/src/app.js';
import { loadConfig, type Config } from '../../apps/server/src/config.js';
import { openOrm, type Orm } from '../../apps/server/src/db/orm.js';
import type { AppDeps } from '../../apps/server/src/deps.js';
import { systemClock, type Clock } from '../../apps/server/src/lib/clock.js';
import { AppError } from '../../apps/server/src/lib/errors.js';
import { createLogger } from '../../apps/server/src/lib/logger.js';
import { SmtpTransport } from '../../apps/server/src/lib/mailer.js';
import { LocalFileStorage } from '../../apps/server/src/lib/storage.js';
import { MemoryRateLimitStore, type RateLimitStore } from '../../apps/server/src/lib/rate-limit.js';
import { newResponseSink } from '../../apps/server/src/lib/cookies.js';
import { MailSender } from '../../apps/server/src/modules/mail/mail-sender.js';
import type { Context, Credentials, RouteCall, ServiceContext } from '../../apps/server/src/modules/request/context.js';
import { workerDatabaseUrl } from './env.js';

export interface InProcessApp {
  url: string;
  app: FastifyInstance;
  orm: Orm;
  deps: AppDeps;
  close(): Promise<void>;
}

/** What a service needs, without HTTP: for unit tests of services against the real database. */
export function serviceContext(orm: Orm, clock: Clock = systemClock, env: Record<string, string> = {}): ServiceContext {
  const config = testConfig(env);
  const deps: AppDeps = {
    config,
    orm,
    clock,
    limiter: new MemoryRateLimitStore(),
    storage: new LocalFileStorage(config.fileStorageDir),
    log: createLogger('silent'),
  };
  return { em: orm.em.fork(), clock, log: deps.log, deps, livemode: true };
}

/**
 * The context a service sees on `em` (a test's own EntityManager, or a transaction it holds), with
 * `deps` when the call reads them (the clock is theirs); the calls that read neither get defaults.
 */
export function contextOn(
  em: EntityManager,
  deps?: Pick<AppDeps, 'config' | 'clock'> & Partial<AppDeps>,
): ServiceContext {
  const log = deps?.log ?? createLogger('silent');
  const full = { config: testConfig(), clock: systemClock, log, ...deps } as AppDeps;
  return { em, deps: full, clock: full.clock, log, livemode: true };
}

export interface RequestOptions {
  credentials?: Partial<Credentials>;
  ip?: string;
  origin?: string;
  userAgent?: string;
  proxyCountry?: string;
  /** The route's call (default: a safe call whose session would need CSRF on an unsafe one). */
  call?: RouteCall;
}

/**
 * A whole request context as the HTTP layer would resolve it, from plain data: for service tests
 * of rules that read credentials or write headers and cookies (without HTTP).
 */
export function requestContext(base: ServiceContext, opts: RequestOptions = {}): Context {
  return {
    ...base,
    em: base.em.fork(),
    caller: {
      id: 'test-request',
      ip: opts.ip ?? '203.0.113.7',
      userAgent: opts.userAgent,
      origin: opts.origin,
      proxyCountry: opts.proxyCountry,
      credentials: {
        authorization: undefined,
        sessionToken: undefined,
        csrfToken: undefined,
        customerToken: undefined,
        checkout: undefined,
        idempotencyKey: undefined,
        mode: undefined,
        preview: undefined,
        ...opts.credentials,
      },
    },
    answer: newResponseSink(),
    call: opts.call ?? { unsafe: false, csrf: 'required' },
  };
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-test-')),
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...env,
  });
}

export async function startInProcess(
  opts: { router?: AnyRouter; clock?: Clock; limiter?: RateLimitStore; env?: Record<string, string> } = {},
): Promise<InProcessApp> {
  const config = testConfig(opts.env);
  const orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const clock = opts.clock ?? systemClock;
  const deps: AppDeps = {
    config,
    orm,
    clock,
    limiter: opts.limiter ?? new MemoryRateLimitStore(),
    storage: new LocalFileStorage(config.fileStorageDir),
    log,
  };
  const app = await buildApp(deps, { router: opts.router });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  // With SMTP_URL, recorded mail goes out as `svc serve` sends it: through a mail sender.
  const sender = config.smtpUrl ? new MailSender(deps, new SmtpTransport(config.smtpUrl, config.mailFrom)) : undefined;
  sender?.start();
  return {
    url: address,
    app,
    orm,
    deps,
    async close() {
      await app.close();
      await sender?.stop();
      await orm.close();
    },
  };
}

/** The error code a service call fails with (the test fails when it does not fail with an AppError). */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the call should fail').toBeInstanceOf(AppError);
  return (error as AppError).appCode;
}
