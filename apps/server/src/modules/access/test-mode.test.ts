/**
 * Who may see a store's test products (access/test-mode.ts), against the real database, without
 * HTTP: preview tokens (bound to the store and the mode, an hour long, signed with a subkey of
 * the application key), a test key of the store, and for a storefront page the svc_preview cookie
 * or a member's session. No credential is a stranger (false); one that does not open the store's
 * test mode is 401.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { uniqueSubdomain } from '../../../../../test/support/factories.js';
import { codeOf, requestContext, serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { createApiKey } from '../api-keys/api-keys.service.js';
import { createUser } from '../identity/identity.service.js';
import { createSession } from '../identity/sessions.js';
import type { Credentials, ServiceContext } from '../request/context.js';
import { createStore } from '../stores/stores.service.js';
import { checkPreviewToken, newPreviewToken, PREVIEW_TTL_MS, storePreview } from '../stores/preview-token.js';
import { pageTestModeAccess, testModeAccess } from './test-mode.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const START = Date.UTC(2026, 3, 1, 12, 0);

async function seller(ctx: ServiceContext) {
  const user = await createUser(ctx, {
    email: `seller-${randomBytes(6).toString('hex')}@example.test`,
    password: 'correct horse battery staple',
  });
  const store = await createStore(ctx, user, { name: 'Shop', subdomain: uniqueSubdomain() });
  return { user, store };
}

const presenting = (base: ServiceContext, credentials: Partial<Credentials>) => requestContext(base, { credentials });

describe('preview tokens', () => {
  it('open the test mode of their store until they expire, an hour after they are made', async () => {
    const clock = new ManualClock(new Date(START));
    const ctx = serviceContext(orm, clock);
    const { store } = await seller(ctx);
    const { token, expiresAt } = newPreviewToken(ctx, store.id);
    expect(token).toMatch(new RegExp(`^svc_preview_${store.id}\\.\\d+\\.[0-9a-f]{64}$`));
    expect(expiresAt.getTime()).toBe(START + PREVIEW_TTL_MS);
    expect(checkPreviewToken(ctx, token, store.id)).toEqual({ ok: true, expiresAt });
    expect(checkPreviewToken(ctx, token, 'a'.repeat(24))).toEqual({ ok: false, reason: 'other_store' });
    clock.set(new Date(START + PREVIEW_TTL_MS - 1000));
    expect(checkPreviewToken(ctx, token, store.id).ok).toBe(true);
    clock.set(new Date(START + PREVIEW_TTL_MS));
    expect(checkPreviewToken(ctx, token, store.id)).toEqual({ ok: false, reason: 'expired' });
  });

  it('cannot be altered or made with another application key', async () => {
    const ctx = serviceContext(orm);
    const { store } = await seller(ctx);
    const { token } = newPreviewToken(ctx, store.id);
    const [head, expires] = token.split('.');
    // A later expiry under the same signature, a signature changed by one digit.
    expect(checkPreviewToken(ctx, `${head}.${Number(expires) + 3600}.${token.split('.')[2]}`, store.id).ok).toBe(false);
    const last = token.at(-1) === '0' ? '1' : '0';
    expect(checkPreviewToken(ctx, `${token.slice(0, -1)}${last}`, store.id)).toEqual({ ok: false, reason: 'invalid' });
    // Another deployment (another APP_ENCRYPTION_KEY) does not take it.
    const elsewhere = serviceContext(orm);
    expect(checkPreviewToken(elsewhere, token, store.id)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('stores.previewToken: the token and the storefront address that carries it', async () => {
    const ctx = serviceContext(orm, new ManualClock(new Date(START)));
    const { store } = await seller(ctx);
    const preview = await storePreview(ctx, { storeId: store.id });
    expect(preview.expiresAt).toBe(new Date(START + PREVIEW_TTL_MS).toISOString());
    expect(preview.url).toBe(`/s/${store.subdomain}?mode=test&preview=${preview.token}`);
    expect(checkPreviewToken(ctx, preview.token, store.id).ok).toBe(true);
  });
});

describe('testModeAccess (the theme API)', () => {
  it('lets a preview token or a test key of the store in, a stranger not, and refuses any other credential with 401', async () => {
    const base = serviceContext(orm);
    const { user, store } = await seller(base);
    const other = await seller(base);
    const token = newPreviewToken(base, store.id).token;
    const testKey = (
      await createApiKey(base, user, { name: 't', scopes: ['order:read'], storeIds: [store.id], mode: 'test' })
    ).key;
    const liveKey = (await createApiKey(base, user, { name: 'l', scopes: ['order:read'], storeIds: [store.id] })).key;
    const otherKey = (
      await createApiKey(base, other.user, {
        name: 'o',
        scopes: ['order:read'],
        storeIds: [other.store.id],
        mode: 'test',
      })
    ).key;
    const access = (authorization?: string) =>
      testModeAccess(presenting(base, authorization === undefined ? {} : { authorization }))(store.id);

    expect(await access()).toBe(false);
    expect(await access(`Bearer ${token}`)).toBe(true);
    expect(await access(`bearer ${testKey}`)).toBe(true);
    for (const refused of [
      `Bearer ${liveKey}`,
      `Bearer ${otherKey}`,
      `Bearer ${newPreviewToken(base, other.store.id).token}`,
      `Bearer svc_preview_nothing`,
      `Bearer sk_test_${'x'.repeat(40)}`,
      'Basic dXNlcjpwYXNz',
    ])
      expect(await codeOf(access(refused)), refused).toBe('unauthorized');
  });
});

describe('pageTestModeAccess (the storefront pages)', () => {
  it("opens for the svc_preview cookie's token or a member's session, and hands the cart module a token", async () => {
    const base = serviceContext(orm, new ManualClock(new Date(START + 17 * 60_000)));
    const { user, store } = await seller(base);
    const token = newPreviewToken(base, store.id).token;
    expect(await pageTestModeAccess(presenting(base, { preview: token }), store.id)).toEqual({ allowed: true, token });
    expect(await pageTestModeAccess(presenting(base, {}), store.id)).toEqual({ allowed: false });
    expect(
      await pageTestModeAccess(presenting(base, { preview: newPreviewToken(base, 'a'.repeat(24)).token }), store.id),
    ).toEqual({ allowed: false });

    const session = await createSession({ ...base, em: orm.em.fork() }, user);
    const bySession = await pageTestModeAccess(presenting(base, { sessionToken: session.token }), store.id);
    expect(bySession.allowed).toBe(true);
    // The token made for a session lasts to the end of the next whole hour: the same all this hour.
    const made = (bySession as { token: string }).token;
    expect(checkPreviewToken(base, made, store.id)).toEqual({ ok: true, expiresAt: new Date(START + 2 * 3600_000) });
    // Another store's member: live.
    const other = await seller(base);
    const otherSession = await createSession({ ...base, em: orm.em.fork() }, other.user);
    expect(await pageTestModeAccess(presenting(base, { sessionToken: otherSession.token }), store.id)).toEqual({
      allowed: false,
    });
  });
});
