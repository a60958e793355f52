import { mkdtempSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const key = randomBytes(32).toString('base64');

describe('loadConfig', () => {
  it('refuses to start in production without its secrets, naming each', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/DATABASE_URL, APP_ENCRYPTION_KEY, PUBLIC_URL/);
    expect(() =>
      loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://x/y', PUBLIC_URL: 'https://shop.example' }),
    ).toThrow(/APP_ENCRYPTION_KEY/);
  });

  it('refuses to start in production without SMTP_URL (mail would wait in a table, secrets in clear)', () => {
    const production = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://x/y',
      PUBLIC_URL: 'https://shop.example',
      APP_ENCRYPTION_KEY: key,
    };
    expect(() => loadConfig(production)).toThrow(/production needs SMTP_URL/);
    expect(loadConfig({ ...production, SMTP_URL: 'smtp://mail.example:587' }).smtpUrl).toBe('smtp://mail.example:587');
    // Outside production the dev mailbox keeps the mail.
    expect(loadConfig({ APP_ENCRYPTION_KEY: key }).smtpUrl).toBeUndefined();
  });

  it('reads METRICS_TOKEN (16 characters at least) and METRICS_PORT (not the API port); empty is unset', () => {
    expect(loadConfig({ METRICS_TOKEN: 'x'.repeat(16), METRICS_PORT: '9464' })).toMatchObject({
      metricsToken: 'x'.repeat(16),
      metricsPort: 9464,
    });
    expect(loadConfig({ METRICS_TOKEN: '', METRICS_PORT: '' })).toMatchObject({
      metricsToken: undefined,
      metricsPort: undefined,
    });
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN: must be at least 16 characters/);
    expect(() => loadConfig({ METRICS_PORT: 'x' })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ PORT: '3000', METRICS_PORT: '3000' })).toThrow(
      /METRICS_PORT \(3000\) must differ from PORT/,
    );
  });

  it('reads DATABASE_REPLICA_URLS as a list of PostgreSQL URLs, and refuses anything else', () => {
    expect(loadConfig({}).databaseReplicaUrls).toEqual([]);
    expect(
      loadConfig({ DATABASE_REPLICA_URLS: ' postgres://r1:5432/svc , postgresql://r2/svc,' }).databaseReplicaUrls,
    ).toEqual(['postgres://r1:5432/svc', 'postgresql://r2/svc']);
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://r1/svc,mysql://r2/svc' })).toThrow(
      /DATABASE_REPLICA_URLS/,
    );
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'not a url' })).toThrow(/DATABASE_REPLICA_URLS/);
  });

  it('does not generate a secret in production', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-config-'));
    const config = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://x/y',
      PUBLIC_URL: 'https://shop.example/',
      APP_ENCRYPTION_KEY: key,
      SMTP_URL: 'smtp://mail.example:587',
      DATA_DIR: dataDir,
    });
    expect(config.encryptionKey.toString('base64')).toBe(key);
    expect(config.publicUrl).toBe('https://shop.example');
    expect(() => readFileSync(path.join(dataDir, 'encryption.key'))).toThrow();
  });

  it('holds a webhook claim longer than an attempt may take (WEBHOOK_LEASE_MS)', () => {
    const base = { APP_ENCRYPTION_KEY: key };
    expect(loadConfig(base).webhookLeaseMs).toBe(60_000);
    // A long timeout without a lease: the default grows with it, or an attempt in flight would be taken over.
    expect(loadConfig({ ...base, WEBHOOK_TIMEOUT_MS: '90000' }).webhookLeaseMs).toBe(120_000);
    expect(loadConfig({ ...base, WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MS: '4000' }).webhookLeaseMs).toBe(4_000);
    expect(() => loadConfig({ ...base, WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_LEASE_MS: '5000' })).toThrow(
      /WEBHOOK_LEASE_MS \(5000\) must be longer than WEBHOOK_TIMEOUT_MS/,
    );
  });

  it("reads the billing engine's lease and poll interval (BILLING_LEASE_MS 60 s, BILLING_POLL_MS 10 s)", () => {
    const base = { APP_ENCRYPTION_KEY: key };
    expect(loadConfig(base)).toMatchObject({ billingLeaseMs: 60_000, billingPollMs: 10_000 });
    expect(loadConfig({ ...base, BILLING_LEASE_MS: '3000', BILLING_POLL_MS: '200' })).toMatchObject({
      billingLeaseMs: 3_000,
      billingPollMs: 200,
    });
    expect(() => loadConfig({ ...base, BILLING_LEASE_MS: '50' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, BILLING_POLL_MS: 'soon' })).toThrow(ConfigError);
  });

  it('rejects a key that is not 32 bytes', () => {
    expect(() => loadConfig({ APP_ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/32 bytes/);
  });

  it('generates and then reuses a key outside production', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-config-'));
    const first = loadConfig({ DATA_DIR: dataDir });
    const second = loadConfig({ DATA_DIR: dataDir });
    expect(first.encryptionKey).toHaveLength(32);
    expect(second.encryptionKey.equals(first.encryptionKey)).toBe(true);
  });

  it("generates the test gateway's secret outside production, one per data directory; production reads the variable only", () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-config-'));
    const first = loadConfig({ DATA_DIR: dataDir, APP_ENCRYPTION_KEY: key });
    // A plain start offers the test gateway: its secret is there, random, and every process on the directory shares it.
    expect(first.testGatewaySecret).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(readFileSync(path.join(dataDir, 'test-gateway.secret'), 'utf8').trim()).toBe(first.testGatewaySecret);
    expect(loadConfig({ DATA_DIR: dataDir, APP_ENCRYPTION_KEY: key }).testGatewaySecret).toBe(first.testGatewaySecret);
    const other = mkdtempSync(path.join(tmpdir(), 'svc-config-'));
    expect(loadConfig({ DATA_DIR: other, APP_ENCRYPTION_KEY: key }).testGatewaySecret).not.toBe(
      first.testGatewaySecret,
    );
    // A secret that is set wins; empty counts as unset.
    expect(
      loadConfig({ DATA_DIR: other, APP_ENCRYPTION_KEY: key, TEST_GATEWAY_SECRET: 'mine' }).testGatewaySecret,
    ).toBe('mine');
    expect(loadConfig({ DATA_DIR: other, APP_ENCRYPTION_KEY: key, TEST_GATEWAY_SECRET: '' }).testGatewaySecret).toMatch(
      /^[A-Za-z0-9+/]{43}=$/,
    );
    // Production: only the variable, and no file.
    const production = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://x/y',
      PUBLIC_URL: 'https://shop.example/',
      APP_ENCRYPTION_KEY: key,
      SMTP_URL: 'smtp://mail.example:587',
    };
    const fresh = mkdtempSync(path.join(tmpdir(), 'svc-config-'));
    expect(loadConfig({ ...production, DATA_DIR: fresh }).testGatewaySecret).toBeUndefined();
    expect(() => readFileSync(path.join(fresh, 'test-gateway.secret'))).toThrow();
    expect(loadConfig({ ...production, DATA_DIR: fresh, TEST_GATEWAY_SECRET: 'set' }).testGatewaySecret).toBe('set');
  });

  it('reads TRUST_PROXY as off, on, a hop count or a list', () => {
    expect(loadConfig({ DATA_DIR: tmpdir(), APP_ENCRYPTION_KEY: key }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true', APP_ENCRYPTION_KEY: key }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2', APP_ENCRYPTION_KEY: key }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.0.0.0/8', APP_ENCRYPTION_KEY: key }).trustProxy).toEqual([
      '10.0.0.1',
      '10.0.0.0/8',
    ]);
  });

  it('defaults PUBLIC_URL to the local port', () => {
    expect(loadConfig({ PORT: '4100', APP_ENCRYPTION_KEY: key }).publicUrl).toBe('http://localhost:4100');
  });
});
