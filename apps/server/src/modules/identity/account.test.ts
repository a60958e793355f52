/**
 * The seller's own account against the real database: a password change needs the current
 * password and ends the other sessions (this one stays); sessions are listed with this one marked,
 * and `Sign out everywhere` ends the others; the display name is set, shown and cleared.
 */
import { randomBytes } from 'node:crypto';
import { ZUpdateAccountInput } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { requestContext, serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { verifyPassword } from '../../lib/crypto.js';
import type { ServiceContext } from '../request/context.js';
import { keptMail } from '../mail/outbox.js';
import {
  changePassword,
  confirmEmailChange,
  listSessions,
  PASSWORD_CHECKS_PER_ACCOUNT,
  requestEmailChange,
  signOutOtherSessions,
  updateAccount,
} from './account.js';
import { SessionSchema, UserSchema } from './identity.entities.js';
import { createUser, login } from './identity.service.js';
import { readAccount } from './two-factor.js';
import { resolveSession } from './sessions.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

const PASSWORD = 'the right password';
const ip = () => `10.${randomBytes(3).join('.')}`;

async function seller() {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0));
  const base = serviceContext(orm, clock, {});
  const email = `acct-${randomBytes(5).toString('hex')}@example.test`;
  const user = await createUser({ ...base, em: orm.em.fork() }, { email, password: PASSWORD });
  const signIn = async () =>
    (await login(requestContext(base, { ip: ip() }), { email, password: PASSWORD })).session.token;
  return { clock, base, email, id: user.id, signIn };
}

const alive = (base: ServiceContext, token: string) =>
  resolveSession({ em: orm.em.fork(), clock: base.clock }, token).then(Boolean);

describe('password change', () => {
  it('needs the current password; ends the other sessions and keeps this one', async () => {
    const s = await seller();
    const [here, phone, laptop] = [await s.signIn(), await s.signIn(), await s.signIn()];
    const who = { userId: s.id, sessionToken: here };
    await expect(
      changePassword(requestContext(s.base, { ip: ip() }), who, {
        currentPassword: 'not it',
        newPassword: 'a new long password',
      }),
    ).rejects.toMatchObject({ appCode: 'validation_failed', issues: [{ path: 'currentPassword' }] });
    expect(await alive(s.base, phone)).toBe(true);

    await changePassword(requestContext(s.base, { ip: ip() }), who, {
      currentPassword: PASSWORD,
      newPassword: 'a new long password',
    });
    expect(await alive(s.base, here)).toBe(true);
    expect(await alive(s.base, phone)).toBe(false);
    expect(await alive(s.base, laptop)).toBe(false);
    const user = await orm.em.fork().findOneOrFail(UserSchema, { id: s.id });
    expect(await verifyPassword('a new long password', user.passwordHash!)).toBe(true);
  });

  it('allows 5 current-password checks per account in 15 minutes', async () => {
    const s = await seller();
    const who = { userId: s.id, sessionToken: await s.signIn() };
    const attempt = (currentPassword: string) =>
      changePassword(requestContext(s.base, { ip: ip() }), who, {
        currentPassword,
        newPassword: 'a new long password',
      });
    for (let i = 0; i < PASSWORD_CHECKS_PER_ACCOUNT.max; i++)
      await expect(attempt(`guess ${i}`)).rejects.toMatchObject({ appCode: 'validation_failed' });
    await expect(attempt(PASSWORD)).rejects.toMatchObject({ appCode: 'rate_limited' });
  });
});

describe('sessions', () => {
  it('lists the sessions newest first with this one marked, last seen to the hour; signs the others out', async () => {
    const s = await seller();
    const first = await s.signIn();
    s.clock.advance(2 * 3600_000);
    const here = await s.signIn();
    s.clock.advance(90 * 60_000);
    // Used again past the hour: its last-seen moves.
    expect(await alive(s.base, first)).toBe(true);
    const who = { userId: s.id, sessionToken: here };
    const listed = await listSessions({ ...s.base, em: orm.em.fork() }, who);
    expect(listed).toHaveLength(2);
    expect(listed.map((row) => row.current)).toEqual([true, false]);
    expect(listed[1]!.lastSeenAt).toBe(new Date(Date.UTC(2026, 5, 1, 15, 30)).toISOString());
    expect(listed[0]!.lastSeenAt).toBe(listed[0]!.createdAt);
    for (const row of listed) expect(row.id).toMatch(/^[0-9a-f]{16}$/);

    expect(await signOutOtherSessions({ ...s.base, em: orm.em.fork() }, who)).toEqual({ signedOut: 1 });
    expect(await alive(s.base, first)).toBe(false);
    expect(await alive(s.base, here)).toBe(true);
    expect(await orm.em.fork().count(SessionSchema, { user: s.id })).toBe(1);
  });
});

describe('e-mail change', () => {
  const mails = (base: ServiceContext, to: string) => keptMail({ em: orm.em.fork(), deps: base.deps }, { to });
  const linkIn = (text: string) => /confirm-email\?token=([\w%-]+)/.exec(text)![1]!;

  it('mails a link to the new address and a notice to the old; the link changes it once; the old address is told', async () => {
    const s = await seller();
    const newEmail = `new-${randomBytes(5).toString('hex')}@example.test`;
    const ctx = () => requestContext(s.base, { ip: ip() });
    await expect(requestEmailChange(ctx(), s.id, { newEmail, password: 'not it' })).rejects.toMatchObject({
      appCode: 'validation_failed',
    });
    await expect(requestEmailChange(ctx(), s.id, { newEmail: s.email, password: PASSWORD })).rejects.toMatchObject({
      appCode: 'validation_failed',
    });
    await requestEmailChange(ctx(), s.id, { newEmail, password: PASSWORD });
    const [confirm] = await mails(s.base, newEmail);
    expect(confirm!.subject).toBe('Confirm your new svc e-mail address');
    expect((await mails(s.base, s.email)).map((m) => m.subject)).toEqual([
      'A change of your svc e-mail address was asked for',
    ]);
    // Nothing changes before the link is opened.
    expect((await orm.em.fork().findOneOrFail(UserSchema, { id: s.id })).email).toBe(s.email);

    const token = decodeURIComponent(linkIn(confirm!.text));
    expect(await confirmEmailChange({ ...s.base, em: orm.em.fork() }, { token })).toEqual({ email: newEmail });
    expect((await orm.em.fork().findOneOrFail(UserSchema, { id: s.id })).email).toBe(newEmail);
    expect((await mails(s.base, s.email)).map((m) => m.subject)).toContain('Your svc e-mail address was changed');
    await expect(confirmEmailChange({ ...s.base, em: orm.em.fork() }, { token })).rejects.toMatchObject({
      appCode: 'token_invalid',
    });
  });

  it('refuses, when the link is opened, an address another account took meanwhile; an expired link is refused', async () => {
    const s = await seller();
    const other = await seller();
    const ctx = () => requestContext(s.base, { ip: ip() });
    await requestEmailChange(ctx(), s.id, { newEmail: other.email, password: PASSWORD });
    const token = decodeURIComponent(
      linkIn((await mails(s.base, other.email)).find((m) => m.subject.startsWith('Confirm'))!.text),
    );
    await expect(confirmEmailChange({ ...s.base, em: orm.em.fork() }, { token })).rejects.toMatchObject({
      appCode: 'conflict',
    });

    const late = `late-${randomBytes(5).toString('hex')}@example.test`;
    await requestEmailChange(ctx(), s.id, { newEmail: late, password: PASSWORD });
    const lateToken = decodeURIComponent(linkIn((await mails(s.base, late))[0]!.text));
    s.clock.advance(60 * 60_000);
    await expect(confirmEmailChange({ ...s.base, em: orm.em.fork() }, { token: lateToken })).rejects.toMatchObject({
      appCode: 'token_invalid',
    });
  });
});

describe('display name', () => {
  it('is null until set; trimmed, 1 to 100 characters; shown by the account and the sign-in; null clears it', async () => {
    const s = await seller();
    expect((await readAccount({ ...s.base, em: orm.em.fork() }, s.id)).user.name).toBeNull();

    expect(ZUpdateAccountInput.safeParse({ name: '' }).success).toBe(false);
    expect(ZUpdateAccountInput.safeParse({ name: '   ' }).success).toBe(false);
    expect(ZUpdateAccountInput.safeParse({ name: 'x'.repeat(101) }).success).toBe(false);
    expect(ZUpdateAccountInput.safeParse({ name: 'a\nb' }).success).toBe(false);
    expect(ZUpdateAccountInput.safeParse({ name: 'Ada', email: 'x@example.test' }).success).toBe(false);
    const input = ZUpdateAccountInput.parse({ name: '  Ada Lovelace  ' });
    expect(input.name).toBe('Ada Lovelace');

    const view = await updateAccount({ ...s.base, em: orm.em.fork() }, s.id, input);
    expect(view).toMatchObject({ id: s.id, email: s.email, name: 'Ada Lovelace' });
    expect((await readAccount({ ...s.base, em: orm.em.fork() }, s.id)).user.name).toBe('Ada Lovelace');
    const signedIn = await login(requestContext(s.base, { ip: ip() }), { email: s.email, password: PASSWORD });
    expect(signedIn.user.name).toBe('Ada Lovelace');

    const cleared = await updateAccount(
      { ...s.base, em: orm.em.fork() },
      s.id,
      ZUpdateAccountInput.parse({ name: null }),
    );
    expect(cleared.name).toBeNull();
    expect((await orm.em.fork().findOneOrFail(UserSchema, { id: s.id })).name).toBeNull();
  });
});
