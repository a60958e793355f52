/**
 * Configuration: the environment, checked by one zod schema. In production the service
 * refuses to start without its secrets; outside production it generates what it needs
 * into the data directory and says so.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { ExplainedFailure } from './lib/failures.js';
import type { ObjectStoreLocation } from './lib/s3-storage.js';
import { trustFunction, type TrustFunction, type TrustProxy } from './lib/trust-proxy.js';

const ZBase64Key = z
  .string()
  .refine((value) => Buffer.from(value, 'base64').length === 32, 'must be 32 bytes, base64-encoded');

const ZEnv = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: z.url().optional(),
  DATABASE_URL: z.string().min(1).optional(),
  /** Read replicas of DATABASE_URL, comma-separated: the listings read from them (db/replicas.ts). */
  DATABASE_REPLICA_URLS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((url) => url.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.url({ protocol: /^postgres(ql)?$/ }))),
  REDIS_URL: z.string().min(1).optional(),
  REDIS_KEY_PREFIX: z.string().max(50).default('svc:'),
  APP_ENCRYPTION_KEY: ZBase64Key.optional(),
  TRUST_PROXY: z.string().optional(),
  SMTP_URL: z.string().optional(),
  MAIL_FROM: z.string().default('svc <no-reply@localhost>'),
  MAIL_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  TEST_GATEWAY_SECRET: z.string().optional(),
  STRIPE_SECRET_KEY: z.string().optional(),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  STRIPE_API_BASE: z.url({ protocol: /^https?$/ }).optional(),
  STOREFRONT_BASE_DOMAIN: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Read by the logger before the configuration (lib/logger.ts); listed so a typo is refused.
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  DATA_DIR: z.string().default('.data'),
  FILE_STORAGE_DIR: z.string().optional(),
  // Uploaded files in an object store instead of FILE_STORAGE_DIR (parseStorageUrl). Empty counts as unset.
  STORAGE_URL: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  FILE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(100 * 1024 * 1024),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  COUNTRY_HEADER: z
    .string()
    .default('cf-ipcountry')
    .transform((v) => v.toLowerCase()),
  CHECKOUT_LIFETIME_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .default(60),
  MERCHANT_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  TRPC_MAX_BATCH_SIZE: z.coerce.number().int().min(1).max(100).default(20),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).max(120_000).default(10_000),
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  WEBHOOK_LEASE_MS: z.coerce.number().int().min(100).max(3_600_000).optional(),
  BILLING_LEASE_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  BILLING_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(10_000),
  WEBHOOK_PREFETCH: z.coerce.number().int().min(0).max(64).default(8),
  WEBHOOK_DISABLE_AFTER_DAYS: z.coerce.number().min(0).default(5),
  WEBHOOK_DISABLE_AFTER_FAILURES: z.coerce.number().int().min(1).default(20),
  // Who may scrape /metrics (http/ops.ts). Empty counts as unset (a `.env` line without a value).
  METRICS_TOKEN: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.string().min(16, 'must be at least 16 characters').optional(),
  ),
  METRICS_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).max(65535).optional()),
});

export interface Config {
  env: 'development' | 'test' | 'production';
  isProduction: boolean;
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | undefined;
  /** Streaming replicas of the database; empty: every read goes to the primary. */
  databaseReplicaUrls: string[];
  redisUrl: string | undefined;
  /** Namespaces every Redis key, so several deployments (or test servers) can share one Redis. */
  redisKeyPrefix: string;
  encryptionKey: Buffer;
  trustProxy: TrustProxy;
  /** TRUST_PROXY as a function of (peer address, hop). */
  isTrustedProxy: TrustFunction;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** How often a mail sender looks for due mail without a wake-up. */
  mailPollMs: number;
  testGatewaySecret: string | undefined;
  stripeSecretKey: string | undefined;
  stripeWebhookSecret: string | undefined;
  /** Where the Stripe client sends API calls instead of api.stripe.com (a local fake in tests). */
  stripeApiBase: string | undefined;
  storefrontBaseDomain: string | undefined;
  logLevel: string;
  dataDir: string;
  bodyLimitBytes: number;
  /** Uploaded product files (local storage adapter). */
  fileStorageDir: string;
  /** STORAGE_URL's bucket: uploaded files live there instead of fileStorageDir. */
  objectStore: ObjectStoreLocation | undefined;
  fileMaxBytes: number;
  trpcMaxBatchSize: number;
  /** The trusted proxy's header carrying the buyer's country (used only with TRUST_PROXY). */
  countryHeader: string;
  /** How long a pending order waits for payment before it expires. */
  checkoutLifetimeMs: number;
  /** Merchant API budget per key per minute (docs/decisions.md: 300). */
  merchantRateLimitPerMinute: number;
  /** One webhook attempt's budget: connect, headers and the body preview (docs/decisions.md: 10 s). */
  webhookTimeoutMs: number;
  /** How often the dispatcher looks for work without a wake-up (a lost Redis message, no Redis). */
  webhookPollMs: number;
  /**
   * How long a claimed attempt is held; past it the attempt counts as abandoned (its dispatcher
   * died) and another dispatcher sends it again. Longer than webhookTimeoutMs, or a slow attempt
   * still in flight would be sent twice.
   */
  webhookLeaseMs: number;
  /** Attempts a dispatcher claims ahead per endpoint slot (0: claim only what it sends at once). */
  webhookPrefetch: number;
  /**
   * How long the billing engine holds a claimed subscription (and a step its row while the charge
   * is in flight); past it another engine takes it over (its step is safe to rerun).
   */
  billingLeaseMs: number;
  /** How often the billing engine looks for due subscriptions at most apart (new ones fall due without a wake-up). */
  billingPollMs: number;
  /** An endpoint is disabled after failing for this long without a success ... */
  webhookDisableAfterDays: number;
  /** ... and at least this many consecutive failed attempts (docs/decisions.md: 5 days and 20). */
  webhookDisableAfterFailures: number;
  /** Scrapers send `Authorization: Bearer <metricsToken>` when it is set (wherever /metrics is served). */
  metricsToken: string | undefined;
  /** /metrics on this port of 127.0.0.1 only, and not on the API port (0: a free port, for tests). */
  metricsPort: number | undefined;
}

export class ConfigError extends ExplainedFailure {
  override name = 'ConfigError';
}

/** `true`, a hop count, or a comma list of proxy addresses/CIDRs, as fastify's trustProxy takes. */
function parseTrustProxy(value: string | undefined): TrustProxy {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

const STORAGE_URL_SHAPE = 's3://<bucket>?endpoint=<url>&region=<region>&forcePathStyle=true';
/** S3's rule for bucket names (3 to 63 lowercase letters, digits, dots and hyphens). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * STORAGE_URL: `s3://<bucket>`, with the store's `endpoint` (absent: AWS S3), `region` (absent:
 * us-east-1, which S3-compatible stores accept) and `forcePathStyle` (`true` for most stores that
 * are not AWS). The credentials are the AWS SDK's own (AWS_ACCESS_KEY_ID, ... or a profile), never
 * in the URL. Anything else refuses to start, in one line saying what.
 */
export function parseStorageUrl(value: string): ObjectStoreLocation {
  const refuse = (why: string) => new ConfigError(`STORAGE_URL ${why}; expected ${STORAGE_URL_SHAPE}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse('is not a URL');
  }
  if (url.protocol !== 's3:') throw refuse(`has the scheme ${url.protocol.replace(/:$/, '')}, not s3`);
  if (url.username || url.password) throw refuse('holds credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  if (!BUCKET.test(url.hostname)) throw refuse(`names no valid bucket (${url.hostname || 'none'})`);
  if (url.port || (url.pathname !== '' && url.pathname !== '/')) throw refuse('has more than a bucket before the ?');
  const known = new Set(['endpoint', 'region', 'forcePathStyle']);
  for (const name of url.searchParams.keys()) if (!known.has(name)) throw refuse(`has an unknown parameter ${name}`);
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(endpoint))
    throw refuse('has an endpoint that is not an http(s) origin');
  const region = url.searchParams.get('region') ?? 'us-east-1';
  if (!/^[a-z0-9-]{1,40}$/.test(region)) throw refuse('has an invalid region');
  const forcePathStyle = url.searchParams.get('forcePathStyle') ?? 'false';
  if (forcePathStyle !== 'true' && forcePathStyle !== 'false')
    throw refuse('has a forcePathStyle other than true or false');
  return { bucket: url.hostname, endpoint, region, forcePathStyle: forcePathStyle === 'true' };
}

/** 32 random bytes, base64, kept in a file of the data directory: made on first start, read after. */
function loadOrCreateSecret(dataDir: string, name: string): string {
  const file = path.join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

/**
 * The test gateway's secret. Outside production the gateway works with nothing set, so a seller
 * tries a purchase end to end on a plain `npm start` (its pay page needs only the order's checkout
 * token). What the secret protects is the notification endpoint: a notification signed with it
 * settles an order without any payment (outside production a live order too), so it is never a
 * fixed default: one random secret per data directory, kept as the encryption key is, which every
 * process on that directory shares and a developer who signs notifications reads from the file.
 * Production reads TEST_GATEWAY_SECRET only (docs/decisions.md, #38 The test gateway on a plain start).
 */
function testGatewaySecret(e: z.infer<typeof ZEnv>, dataDir: string): string | undefined {
  // Empty counts as unset (a `.env` line without a value).
  if (e.TEST_GATEWAY_SECRET || e.NODE_ENV === 'production') return e.TEST_GATEWAY_SECRET || undefined;
  return loadOrCreateSecret(dataDir, 'test-gateway.secret');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ZEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const isProduction = e.NODE_ENV === 'production';
  if (isProduction) {
    const missing = (['DATABASE_URL', 'APP_ENCRYPTION_KEY', 'PUBLIC_URL'] as const).filter((name) => !e[name]);
    if (missing.length > 0) {
      throw new ConfigError(`production needs ${missing.join(', ')}; no defaults are used for secrets in production`);
    }
    // Without SMTP the mail would wait in the outbound_email table, password-reset links and
    // sign-in codes in clear: production sends it or does not start.
    if (!e.SMTP_URL) {
      throw new ConfigError(
        'production needs SMTP_URL: without it password-reset links and sign-in codes would be kept in the database instead of sent',
      );
    }
  }
  if (e.WEBHOOK_LEASE_MS !== undefined && e.WEBHOOK_LEASE_MS <= e.WEBHOOK_TIMEOUT_MS) {
    throw new ConfigError(
      `WEBHOOK_LEASE_MS (${e.WEBHOOK_LEASE_MS}) must be longer than WEBHOOK_TIMEOUT_MS (${e.WEBHOOK_TIMEOUT_MS})`,
    );
  }
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && e.METRICS_PORT === e.PORT) {
    throw new ConfigError(
      `METRICS_PORT (${e.METRICS_PORT}) must differ from PORT: /metrics leaves the API port for it`,
    );
  }
  const dataDir = path.resolve(e.DATA_DIR);
  return {
    env: e.NODE_ENV,
    isProduction,
    port: e.PORT,
    host: e.HOST,
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, ''),
    databaseUrl: e.DATABASE_URL,
    databaseReplicaUrls: e.DATABASE_REPLICA_URLS,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    encryptionKey: Buffer.from(e.APP_ENCRYPTION_KEY ?? loadOrCreateSecret(dataDir, 'encryption.key'), 'base64'),
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    isTrustedProxy: trustFunction(parseTrustProxy(e.TRUST_PROXY)),
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    mailPollMs: e.MAIL_POLL_MS,
    testGatewaySecret: testGatewaySecret(e, dataDir),
    stripeSecretKey: e.STRIPE_SECRET_KEY,
    stripeWebhookSecret: e.STRIPE_WEBHOOK_SECRET,
    stripeApiBase: e.STRIPE_API_BASE?.replace(/\/$/, ''),
    storefrontBaseDomain: e.STOREFRONT_BASE_DOMAIN,
    logLevel: e.LOG_LEVEL,
    dataDir,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    fileStorageDir: path.resolve(e.FILE_STORAGE_DIR ?? path.join(dataDir, 'files')),
    objectStore: e.STORAGE_URL === undefined ? undefined : parseStorageUrl(e.STORAGE_URL),
    fileMaxBytes: e.FILE_MAX_BYTES,
    trpcMaxBatchSize: e.TRPC_MAX_BATCH_SIZE,
    merchantRateLimitPerMinute: e.MERCHANT_RATE_LIMIT_PER_MINUTE,
    countryHeader: e.COUNTRY_HEADER,
    checkoutLifetimeMs: e.CHECKOUT_LIFETIME_MINUTES * 60_000,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookPollMs: e.WEBHOOK_POLL_MS,
    webhookLeaseMs: e.WEBHOOK_LEASE_MS ?? Math.max(60_000, e.WEBHOOK_TIMEOUT_MS + 30_000),
    webhookPrefetch: e.WEBHOOK_PREFETCH,
    billingLeaseMs: e.BILLING_LEASE_MS,
    billingPollMs: e.BILLING_POLL_MS,
    webhookDisableAfterDays: e.WEBHOOK_DISABLE_AFTER_DAYS,
    webhookDisableAfterFailures: e.WEBHOOK_DISABLE_AFTER_FAILURES,
    metricsToken: e.METRICS_TOKEN,
    metricsPort: e.METRICS_PORT,
  };
}
