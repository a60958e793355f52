/**
 * Seller sign-in and password reset against the real database, without HTTP: the account's
 * budget of sign-in attempts and what comes past it (a code e-mailed when the right password
 * came, asked for whatever the password, tried only behind the right password), a completed reset
 * emptying the account's window, and `forgot` answering the same, in the same time, for any
 * address, within a budget of reset mails per account.
 *
 * Every test builds its own service context (its own config key, in-process limiter and clock)
 * and its own accounts, so no test depends on another's rows or windows. Mail is kept (no
 * SMTP_URL) and read from the outbox; work left for after an answer is waited for with
 * `settleAfterAnswer`.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { requestContext, serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { settleAfterAnswer } from '../../lib/after-answer.js';
import { ManualClock } from '../../lib/clock.js';
import type { AppError } from '../../lib/errors.js';
import { keptMail } from '../mail/outbox.js';
import type { ServiceContext } from '../request/context.js';
import { SessionSchema, SignInCodeSchema } from './identity.entities.js';
import {
  createUser,
  login,
  LOGIN_ATTEMPTS_PER_ACCOUNT,
  requestPasswordReset,
  RESET_MAILS_PER_ACCOUNT,
  resetPassword,
} from './identity.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

const PUBLIC_URL = 'https://svc.example';
const PASSWORD = 'the right password';

function setup() {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0));
  return { clock, base: serviceContext(orm, clock, { PUBLIC_URL }) };
}

function randomIp(): string {
  const [a, b, c] = randomBytes(3);
  return `10.${a}.${b}.${c}`;
}

const sellerEmail = () => `seller-${randomBytes(5).toString('hex')}@example.test`;

async function newSeller(base: ServiceContext) {
  const email = sellerEmail();
  const user = await createUser({ ...base, em: orm.em.fork() }, { email, password: PASSWORD });
  return { email, id: user.id };
}

/** One sign-in attempt as the route makes it: a request of its own, from an address of its own. */
function attempt(base: ServiceContext, email: string, password: string, code?: string) {
  const ctx = requestContext(base, { ip: randomIp() });
  return { ctx, result: login(ctx, { email, password, code }) };
}

/** The refusal's code and message, or `signed in`. */
async function outcome(base: ServiceContext, email: string, password: string, code?: string) {
  try {
    await attempt(base, email, password, code).result;
    return 'signed in';
  } catch (error) {
    return { code: (error as AppError).appCode, message: (error as AppError).message };
  }
}

/** Spends the account's whole budget on wrong guesses. */
async function exhaust(base: ServiceContext, email: string): Promise<void> {
  for (let i = 0; i < LOGIN_ATTEMPTS_PER_ACCOUNT.max; i++) {
    expect(await outcome(base, email, `guess ${i}`)).toMatchObject({ code: 'unauthorized' });
  }
}

const mailsTo = async (base: ServiceContext, address: string) => {
  await settleAfterAnswer();
  return keptMail({ em: orm.em.fork(), deps: base.deps }, { to: address });
};

const codesIn = (mails: Array<{ text: string }>) =>
  mails.map((mail) => /enter this code with your password: (\d{6})/.exec(mail.text)?.[1]).filter(Boolean);

const REQUIRED = {
  code: 'sign_in_code_required',
  message:
    'Too many sign-in attempts on this account. If the password is right, a sign-in code is on its way to the account’s e-mail address: enter it with the password.',
};

/** The same, as the thrown AppError says it. */
const REQUIRED_ERROR = { appCode: REQUIRED.code, message: REQUIRED.message };

describe('sign-in past the account’s attempts', () => {
  it('asks every attempt for a code, mails one only for the right password, and signs the owner in with both', async () => {
    const { base } = setup();
    const seller = await newSeller(base);
    await exhaust(base, seller.email);

    // A guesser and the owner get the same answer; only the owner's attempt mails a code.
    expect(await outcome(base, seller.email, 'guess 11')).toEqual(REQUIRED);
    expect(await mailsTo(base, seller.email)).toEqual([]);
    const { ctx, result } = attempt(base, seller.email, PASSWORD);
    await expect(result).rejects.toMatchObject(REQUIRED_ERROR);
    // The answer says when the password alone works again.
    expect(ctx.answer.headers['RateLimit-Policy']).toBe('"auth.login.account";q=10;w=900');
    expect(Number(ctx.answer.headers['Retry-After'])).toBeGreaterThan(0);
    const mails = await mailsTo(base, seller.email);
    expect(mails.map((mail) => mail.subject)).toEqual(['Your svc sign-in code']);
    expect(mails[0]!.text).toContain(`${PUBLIC_URL}/dashboard/forgot-password`);
    const [code] = codesIn(mails);

    // The code needs the password, the password the code.
    expect(await outcome(base, seller.email, 'guess 12', code)).toEqual({
      code: 'unauthorized',
      message: 'Wrong e-mail, password or code.',
    });
    const wrong = code === '000000' ? '111111' : '000000';
    expect(await outcome(base, seller.email, PASSWORD, wrong)).toMatchObject({ code: 'unauthorized' });
    const signedIn = attempt(base, seller.email, PASSWORD, code);
    await expect(signedIn.result).resolves.toMatchObject({ user: { email: seller.email } });
    expect(await orm.em.fork().count(SessionSchema, { user: seller.id })).toBe(1);

    // Used; and the sign-in emptied the account's window: the password alone works again.
    expect(await orm.em.fork().count(SignInCodeSchema, { user: seller.id, usedAt: null })).toBe(0);
    expect(await outcome(base, seller.email, 'guess 13')).toMatchObject({ code: 'unauthorized' });
    expect(await outcome(base, seller.email, PASSWORD)).toBe('signed in');
  });

  it('keeps the code out of a guesser’s reach: tries without the right password do not wear it out', async () => {
    const { base } = setup();
    const seller = await newSeller(base);
    await exhaust(base, seller.email);
    await expect(attempt(base, seller.email, PASSWORD).result).rejects.toMatchObject(REQUIRED_ERROR);
    const [code] = codesIn(await mailsTo(base, seller.email));
    for (let i = 0; i < 20; i++) {
      expect(await outcome(base, seller.email, `guess ${i}`, String(100000 + i))).toMatchObject({
        code: 'unauthorized',
      });
    }
    const [row] = await orm.em.fork().find(SignInCodeSchema, { user: seller.id });
    expect(row).toMatchObject({ attempts: 0, usedAt: null });
    expect(await outcome(base, seller.email, PASSWORD, code)).toBe('signed in');
  });

  it('allows 5 tries of a code with the right password; the 6th, even the right one, is refused', async () => {
    const { base } = setup();
    const seller = await newSeller(base);
    await exhaust(base, seller.email);
    await expect(attempt(base, seller.email, PASSWORD).result).rejects.toMatchObject(REQUIRED_ERROR);
    const [code] = codesIn(await mailsTo(base, seller.email));
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      expect(await outcome(base, seller.email, PASSWORD, wrong)).toMatchObject({ code: 'unauthorized' });
    }
    expect(await outcome(base, seller.email, PASSWORD, code)).toMatchObject({ code: 'unauthorized' });
  });

  it('stores a code only as a keyed hash, open for 15 minutes; an expired one is refused', async () => {
    const { clock, base } = setup();
    const seller = await newSeller(base);
    await exhaust(base, seller.email);
    clock.advance(10 * 60_000);
    await expect(attempt(base, seller.email, PASSWORD).result).rejects.toMatchObject(REQUIRED_ERROR);
    const [code] = codesIn(await mailsTo(base, seller.email));
    const [row] = await orm.em.fork().find(SignInCodeSchema, { user: seller.id });
    expect(row!.codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.codeHash).not.toContain(code);
    expect(row!.expiresAt.getTime() - clock.now().getTime()).toBe(15 * 60_000);
    // The guesser fills the window again as it empties; the code's 15 minutes pass meanwhile.
    clock.advance(5 * 60_000);
    await exhaust(base, seller.email);
    clock.advance(10 * 60_000 + 1_000);
    expect(await outcome(base, seller.email, PASSWORD, code)).toMatchObject({ code: 'unauthorized' });
  });

  it('answers an unknown address past its attempts the same, and mails nothing', async () => {
    const { base } = setup();
    const email = sellerEmail();
    await exhaust(base, email);
    expect(await outcome(base, email, PASSWORD)).toEqual(REQUIRED);
    expect(await outcome(base, email, PASSWORD, '123456')).toEqual({
      code: 'unauthorized',
      message: 'Wrong e-mail, password or code.',
    });
    expect(await mailsTo(base, email)).toEqual([]);
  });

  it('mails at most 5 codes per account in 15 minutes; every open code works', async () => {
    const { clock, base } = setup();
    const seller = await newSeller(base);
    await exhaust(base, seller.email);
    for (let i = 0; i < 7; i++) {
      await expect(attempt(base, seller.email, PASSWORD).result).rejects.toMatchObject(REQUIRED_ERROR);
      await settleAfterAnswer();
      clock.advance(1_000); // so the mails are told apart by their time, newest first
    }
    const codes = codesIn(await mailsTo(base, seller.email));
    expect(codes).toHaveLength(5);
    // The first one mailed still works after four more were.
    expect(await outcome(base, seller.email, PASSWORD, codes.at(-1))).toBe('signed in');
  });
});

describe('password reset', () => {
  /** forgot, then the link from the mail, as the seller would. */
  async function resetWithMail(base: ServiceContext, email: string, password: string): Promise<void> {
    await requestPasswordReset({ ...base, em: orm.em.fork() }, { email });
    // The clock stands still: find the reset mail by what it says, not by its place among the mail.
    const mail = (await mailsTo(base, email)).find((m) => m.subject === 'Reset your svc password');
    const token = /token=([A-Za-z0-9_-]+)/.exec(mail!.text)![1]!;
    await resetPassword({ ...base, em: orm.em.fork() }, { token, password });
  }

  it('empties the account’s window: after a reset the new password alone signs in', async () => {
    const { base } = setup();
    const seller = await newSeller(base);
    await exhaust(base, seller.email);
    await expect(attempt(base, seller.email, PASSWORD).result).rejects.toMatchObject(REQUIRED_ERROR);

    await resetWithMail(base, seller.email, 'a brand new password');
    expect(await outcome(base, seller.email, 'a brand new password')).toBe('signed in');
    // The codes mailed before the reset are closed.
    expect(await orm.em.fork().count(SignInCodeSchema, { user: seller.id, usedAt: null })).toBe(0);
  });

  it('answers forgot without waiting for the link to be written, for a known address as for an unknown one', async () => {
    const { base } = setup();
    const seller = await newSeller(base);
    const ghost = sellerEmail();
    // Another session holds the table the link is written to: writing it would wait.
    const locker = new pg.Client({ connectionString: workerDatabaseUrl() });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table password_reset in access exclusive mode');
      for (const email of [seller.email, ghost]) {
        const answered = requestPasswordReset({ ...base, em: orm.em.fork() }, { email }).then(() => 'answered');
        const deadline = new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5_000).unref());
        expect(await Promise.race([answered, deadline]), email).toBe('answered');
      }
      expect(await keptMail({ em: orm.em.fork(), deps: base.deps }, { to: seller.email })).toEqual([]);
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    // Once the table is free, the link is written and mailed, to the account only.
    expect((await mailsTo(base, seller.email)).map((mail) => mail.subject)).toEqual(['Reset your svc password']);
    expect(await mailsTo(base, ghost)).toEqual([]);
  });

  it('mails an account at most 3 reset links an hour, whoever asks; the answer never changes', async () => {
    const { clock, base } = setup();
    const seller = await newSeller(base);
    for (let i = 0; i < 5; i++) {
      await expect(requestPasswordReset({ ...base, em: orm.em.fork() }, { email: seller.email })).resolves.toBe(
        undefined,
      );
    }
    expect(await mailsTo(base, seller.email)).toHaveLength(RESET_MAILS_PER_ACCOUNT.max);
    clock.advance(RESET_MAILS_PER_ACCOUNT.windowMs);
    await requestPasswordReset({ ...base, em: orm.em.fork() }, { email: seller.email });
    expect(await mailsTo(base, seller.email)).toHaveLength(RESET_MAILS_PER_ACCOUNT.max + 1);
  });
});
