/**
 * Mail through the outbox (issue 26): a request records its mail and answers; a mail sender sends
 * it later. So an SMTP server that is down or refusing changes no answer (password reset for a
 * known and an unknown address alike, a buyer's sign-in code), and the mail arrives once the
 * server takes it, the failed attempt tried again. Black-box: the built server against real SMTP
 * listeners on loopback.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startServer } from './support/server.js';
import { clientIp, createStoreFor, registerSeller, uniqueEmail } from './support/seller.js';
import { startSmtpListener } from './support/smtp.js';
import { reservePort } from './support/webhook-receiver.js';

/** The first retry comes 5 s (+/- 10%) after a failed attempt; the mail arrives well within this. */
const ARRIVAL_MS = 20_000;

const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
});
afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
});

function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify(body),
  });
}

async function serverWithSmtpAt(port: number) {
  const server = await startServer({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_POLL_MS: '200' });
  stops.push(() => server.stop());
  return server;
}

describe('mail with the SMTP server down', () => {
  it('answers forgot (known and unknown address) and the code request as usual, then delivers once SMTP is up', async () => {
    const port = await reservePort();
    const server = await serverWithSmtpAt(port);
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller, 'Outage Shop');
    const ghost = uniqueEmail('ghost');
    const buyer = uniqueEmail('buyer');

    // Nothing listens on the SMTP port: no answer depends on it.
    const known = await post(server.url, '/api/auth/forgot', { email: seller.email });
    expect(known.status).toBe(204);
    const unknown = await post(server.url, '/api/auth/forgot', { email: ghost });
    expect(unknown.status).toBe(204);
    const code = await post(server.url, '/api/customer/auth/start', { storeId: store.id, email: buyer });
    expect(code.status).toBe(204);

    // Both mails are tried while nothing listens, and fail. Wait for those two failures, so the
    // mail that arrives below is the retry, not a first attempt that happened to come late.
    await expect
      .poll(() => server.output().split('mail not sent; will try again').length - 1, { timeout: ARRIVAL_MS })
      .toBeGreaterThanOrEqual(2);

    // The server comes up: the attempts that failed are tried again and the mail arrives.
    const smtp = await startSmtpListener({ port });
    stops.push(() => smtp.stop());
    const reset = await smtp.waitFor((mail) => mail.to.includes(seller.email), ARRIVAL_MS);
    expect(reset.subject).toBe('Reset your svc password');
    expect(reset.text).toMatch(/reset-password\?token=[A-Za-z0-9_-]+/);
    const signIn = await smtp.waitFor((mail) => mail.to.includes(buyer), ARRIVAL_MS);
    expect(signIn.subject).toBe('Your sign-in code for Outage Shop');
    expect(signIn.text).toMatch(/\b\d{6}\b/);

    // The link mailed late still works.
    const token = /token=([A-Za-z0-9_-]+)/.exec(reset.text)![1];
    expect((await post(server.url, '/api/auth/reset', { token, password: 'a password sent late' })).status).toBe(204);
    // Nothing was recorded for the unknown address, so nothing went to it.
    expect(smtp.mails.filter((mail) => mail.to.includes(seller.email))).toHaveLength(1);
    expect(smtp.mails.some((mail) => mail.to.includes(ghost))).toBe(false);
    // The log never says what the mail said.
    await server.logsSettled();
    expect(server.output()).not.toContain(token!);
    expect(server.output()).not.toMatch(/Your code is \d{6}/);
  });

  it('sends a mail the server refused (451) again once it takes mail', async () => {
    let refusing = true;
    const smtp = await startSmtpListener({ refusing: () => refusing });
    stops.push(() => smtp.stop());
    const server = await serverWithSmtpAt(Number(new URL(smtp.url).port));
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller, 'Busy Shop');
    const buyer = uniqueEmail('buyer');

    expect((await post(server.url, '/api/auth/forgot', { email: seller.email })).status).toBe(204);
    expect((await post(server.url, '/api/customer/auth/start', { storeId: store.id, email: buyer })).status).toBe(204);
    // Both were offered and refused...
    await expect
      .poll(() => smtp.refused, { timeout: ARRIVAL_MS })
      .toEqual(expect.arrayContaining([seller.email, buyer]));
    expect(smtp.mails.some((mail) => mail.to.includes(seller.email) || mail.to.includes(buyer))).toBe(false);
    // ...and arrive once the server takes mail, each once.
    refusing = false;
    await smtp.waitFor((mail) => mail.to.includes(seller.email), ARRIVAL_MS);
    await smtp.waitFor((mail) => mail.to.includes(buyer), ARRIVAL_MS);
    expect(smtp.mails.filter((mail) => mail.to.includes(seller.email))).toHaveLength(1);
    expect(smtp.mails.filter((mail) => mail.to.includes(buyer))).toHaveLength(1);
  });
});
