/**
 * Two-factor sign-in against the real database, without HTTP: enrolment confirmed by a first
 * code, the secret sealed at rest, ten recovery codes kept as hashes and used once, a code taken
 * once in its window, the account's budget of second-factor tries, turning it off, new recovery
 * codes in place of the old, and how it meets the e-mailed sign-in code of an account past its
 * attempts.
 */
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { requestContext, serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { settleAfterAnswer } from '../../lib/after-answer.js';
import { ManualClock } from '../../lib/clock.js';
import type { AppError } from '../../lib/errors.js';
import { keptMail } from '../mail/outbox.js';
import type { ServiceContext } from '../request/context.js';
import { RecoveryCodeSchema, UserSchema } from './identity.entities.js';
import { createUser, login, LOGIN_ATTEMPTS_PER_ACCOUNT } from './identity.service.js';
import {
  confirmTwoFactor,
  disableTwoFactor,
  readAccount,
  regenerateRecoveryCodes,
  startTwoFactor,
  TWO_FACTOR_TRIES_PER_ACCOUNT,
} from './two-factor.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

const PASSWORD = 'the right password';

function setup() {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 5));
  return { clock, base: serviceContext(orm, clock, { PUBLIC_URL: 'https://svc.example' }) };
}

const ip = () => {
  const [a, b, c] = randomBytes(3);
  return `10.${a}.${b}.${c}`;
};
/** A request of its own, as the route makes one. */
const req = (base: ServiceContext) => requestContext(base, { ip: ip() });

async function newSeller(base: ServiceContext) {
  const email = `tf-${randomBytes(5).toString('hex')}@example.test`;
  const user = await createUser({ ...base, em: orm.em.fork() }, { email, password: PASSWORD });
  return { email, id: user.id };
}

const codeAt = (secret: string, at: Date) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: at.getTime(),
  });

async function outcome(
  base: ServiceContext,
  email: string,
  password: string,
  more: { code?: string; twoFactorCode?: string } = {},
) {
  try {
    await login(req(base), { email, password, ...more });
    return 'signed in';
  } catch (error) {
    return (error as AppError).appCode;
  }
}

/** A seller with two-factor sign-in on: its secret and recovery codes. */
async function enrolled(base: ServiceContext, clock: ManualClock) {
  const seller = await newSeller(base);
  const setupAnswer = await startTwoFactor(req(base), seller.id);
  const recoveryCodes = await confirmTwoFactor(req(base), seller.id, { code: codeAt(setupAnswer.secret, clock.now()) });
  // The confirming code's step is spent: move to the next window for the tests' own codes.
  clock.advance(30_000);
  return { ...seller, secret: setupAnswer.secret, recoveryCodes };
}

describe('enrolment', () => {
  it('hands out the secret, its otpauth URI and a QR image; keeps the secret sealed; turns on with a first code only', async () => {
    const { base, clock } = setup();
    const seller = await newSeller(base);
    const answer = await startTwoFactor(req(base), seller.id);
    expect(answer.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(answer.otpauthUri).toMatch(/^otpauth:\/\/totp\/svc:/);
    expect(answer.otpauthUri).toContain(`secret=${answer.secret}`);
    expect(answer.qrCode).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(answer.qrCode.split(',')[1]!, 'base64').toString()).toContain('<svg');

    const row = await orm.em.fork().findOneOrFail(UserSchema, { id: seller.id });
    expect(row.totpSecretEnc).toBeTruthy();
    expect(row.totpSecretEnc).not.toContain(answer.secret);
    expect(row.totpEnabledAt).toBeNull();
    // Not on yet: the password alone still signs in.
    expect(await outcome(base, seller.email, PASSWORD)).toBe('signed in');

    await expect(confirmTwoFactor(req(base), seller.id, { code: '000000' })).rejects.toMatchObject({
      appCode: 'validation_failed',
    });
    const codes = await confirmTwoFactor(req(base), seller.id, { code: codeAt(answer.secret, clock.now()) });
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    expect(new Set(codes).size).toBe(10);
    const stored = await orm.em.fork().find(RecoveryCodeSchema, { user: seller.id });
    expect(stored).toHaveLength(10);
    for (const { codeHash } of stored) for (const code of codes) expect(codeHash).not.toContain(code.replace('-', ''));
    expect(await readAccount({ ...base, em: orm.em.fork() }, seller.id)).toMatchObject({
      twoFactor: { enabled: true, recoveryCodesLeft: 10 },
    });
    await expect(startTwoFactor(req(base), seller.id)).rejects.toMatchObject({ appCode: 'conflict' });
  });
});

describe('sign-in with two-factor on', () => {
  it('asks for the second factor after the right password only, and signs in with the app’s code', async () => {
    const { base, clock } = setup();
    const seller = await enrolled(base, clock);
    expect(await outcome(base, seller.email, 'wrong password')).toBe('unauthorized');
    expect(
      await outcome(base, seller.email, 'wrong password', { twoFactorCode: codeAt(seller.secret, clock.now()) }),
    ).toBe('unauthorized');
    expect(await outcome(base, seller.email, PASSWORD)).toBe('two_factor_required');
    expect(
      await outcome(base, seller.email, PASSWORD, {
        twoFactorCode: '123456' === codeAt(seller.secret, clock.now()) ? '654321' : '123456',
      }),
    ).toBe('unauthorized');
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: codeAt(seller.secret, clock.now()) })).toBe(
      'signed in',
    );
  });

  it('takes a code once: the same code again in its window is refused; the next window’s code works', async () => {
    const { base, clock } = setup();
    const seller = await enrolled(base, clock);
    const code = codeAt(seller.secret, clock.now());
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: code })).toBe('signed in');
    clock.advance(5_000);
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: code })).toBe('unauthorized');
    // The previous step's code is one step of drift, but older than the one taken: refused too.
    clock.advance(30_000);
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: code })).toBe('unauthorized');
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: codeAt(seller.secret, clock.now()) })).toBe(
      'signed in',
    );
  });

  it('signs in with a recovery code once (case and dash free); a used one fails the second time', async () => {
    const { base, clock } = setup();
    const seller = await enrolled(base, clock);
    const [first, second] = seller.recoveryCodes;
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: first! })).toBe('signed in');
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: first! })).toBe('unauthorized');
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: second!.replace('-', '').toUpperCase() })).toBe(
      'signed in',
    );
    expect(await readAccount({ ...base, em: orm.em.fork() }, seller.id)).toMatchObject({
      twoFactor: { recoveryCodesLeft: 8 },
    });
  });

  it('allows 5 second-factor tries per account in 15 minutes; past them even the right code waits', async () => {
    const { base, clock } = setup();
    const seller = await enrolled(base, clock);
    const right = codeAt(seller.secret, clock.now());
    const wrong = right === '000000' ? '111111' : '000000';
    // The enrolment's confirming code was the first try of the window.
    for (let i = 1; i < TWO_FACTOR_TRIES_PER_ACCOUNT.max; i++)
      expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: wrong })).toBe('unauthorized');
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: right })).toBe('rate_limited');
    clock.advance(TWO_FACTOR_TRIES_PER_ACCOUNT.windowMs);
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: codeAt(seller.secret, clock.now()) })).toBe(
      'signed in',
    );
  });

  it('past the account’s attempts wants the e-mailed code and the second factor; the e-mailed code survives the ask', async () => {
    const { base, clock } = setup();
    const seller = await enrolled(base, clock);
    for (let i = 0; i < LOGIN_ATTEMPTS_PER_ACCOUNT.max; i++)
      expect(await outcome(base, seller.email, `guess ${i}`)).toBe('unauthorized');
    expect(await outcome(base, seller.email, PASSWORD)).toBe('sign_in_code_required');
    await settleAfterAnswer();
    const [mail] = await keptMail({ em: orm.em.fork(), deps: base.deps }, { to: seller.email });
    const code = /enter this code with your password: (\d{6})/.exec(mail!.text)![1]!;
    expect(await outcome(base, seller.email, PASSWORD, { code })).toBe('two_factor_required');
    expect(
      await outcome(base, seller.email, PASSWORD, { code, twoFactorCode: codeAt(seller.secret, clock.now()) }),
    ).toBe('signed in');
  });
});

describe('turning it off', () => {
  it('needs the password or a current code; then the password alone signs in', async () => {
    const { base, clock } = setup();
    const seller = await enrolled(base, clock);
    await expect(disableTwoFactor(req(base), seller.id, { password: 'wrong password' })).rejects.toMatchObject({
      appCode: 'validation_failed',
    });
    await expect(
      disableTwoFactor(req(base), seller.id, {
        code: '000000' === codeAt(seller.secret, clock.now()) ? '111111' : '000000',
      }),
    ).rejects.toMatchObject({
      appCode: 'validation_failed',
    });
    expect(await outcome(base, seller.email, PASSWORD)).toBe('two_factor_required');
    await disableTwoFactor(req(base), seller.id, { password: PASSWORD });
    expect(await orm.em.fork().count(RecoveryCodeSchema, { user: seller.id })).toBe(0);
    const row = await orm.em.fork().findOneOrFail(UserSchema, { id: seller.id });
    expect(row.totpSecretEnc).toBeNull();
    expect(await outcome(base, seller.email, PASSWORD)).toBe('signed in');

    const again = await enrolled(base, clock);
    await disableTwoFactor(req(base), again.id, { code: again.recoveryCodes[0]! });
    expect(await outcome(base, again.email, PASSWORD)).toBe('signed in');
  });
});

describe('new recovery codes', () => {
  it('need the password or a current code; ten new ones replace the old, which stop working', async () => {
    const { base, clock } = setup();
    const seller = await enrolled(base, clock);
    // One old code used, so the count shows the replacement.
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: seller.recoveryCodes[0]! })).toBe('signed in');
    expect((await readAccount(req(base), seller.id)).twoFactor.recoveryCodesLeft).toBe(9);

    await expect(regenerateRecoveryCodes(req(base), seller.id, { password: 'wrong password' })).rejects.toMatchObject({
      appCode: 'validation_failed',
      issues: [{ path: 'password' }],
    });
    // Refused: the old codes still work.
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: seller.recoveryCodes[1]! })).toBe('signed in');

    const fresh = await regenerateRecoveryCodes(req(base), seller.id, { password: PASSWORD });
    expect(fresh).toHaveLength(10);
    expect(new Set(fresh).size).toBe(10);
    for (const code of fresh) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    expect(fresh.filter((code) => seller.recoveryCodes.includes(code))).toEqual([]);
    expect((await readAccount(req(base), seller.id)).twoFactor.recoveryCodesLeft).toBe(10);
    expect(await orm.em.fork().count(RecoveryCodeSchema, { user: seller.id })).toBe(10);

    // An old unused code fails; a new one signs in, once (in a new window of second-factor tries).
    clock.advance(TWO_FACTOR_TRIES_PER_ACCOUNT.windowMs);
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: seller.recoveryCodes[2]! })).toBe(
      'unauthorized',
    );
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: fresh[0]! })).toBe('signed in');
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: fresh[0]! })).toBe('unauthorized');

    // With the app's code instead of the password.
    clock.advance(TWO_FACTOR_TRIES_PER_ACCOUNT.windowMs);
    const byCode = await regenerateRecoveryCodes(req(base), seller.id, { code: codeAt(seller.secret, clock.now()) });
    expect(byCode).toHaveLength(10);
    expect(await outcome(base, seller.email, PASSWORD, { twoFactorCode: fresh[1]! })).toBe('unauthorized');
  });

  it('are refused while two-factor sign-in is off', async () => {
    const { base } = setup();
    const seller = await newSeller(base);
    await expect(regenerateRecoveryCodes(req(base), seller.id, { password: PASSWORD })).rejects.toMatchObject({
      appCode: 'conflict',
    });
  });
});
