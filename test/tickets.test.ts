/**
 * Black-box: support tickets on the built server over real HTTP, with a real SMTP listener.
 * A buyer opens and answers tickets with the order's checkout token (body or `svc_checkout`
 * cookie) or a customer session; staff holding `viewOrders` list, read, answer, reopen and
 * close them on the dashboard; each message is e-mailed to the other side.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import {
  addStaff,
  clientIp,
  createStoreFor,
  dashboard,
  registerSeller,
  uniqueEmail,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';
import { startSmtpListener, type ReceivedMail } from './support/smtp.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NO_CREDENTIAL = {
  error: 'Open the order with its checkout link or sign in to the store first.',
  code: 'unauthorized',
};
const WRONG_TOKEN = { error: 'This link does not open this order.', code: 'store_forbidden' };
const ORDER_NOT_FOUND = { error: 'Order not found.', code: 'not_found' };
const TICKET_NOT_FOUND = { error: 'Ticket not found.', code: 'not_found' };
const NO_VIEW_ORDERS = { error: 'This needs the viewOrders permission.', code: 'permission_missing' };
const NOT_A_MEMBER = { error: 'You are not a member of this store.', code: 'store_forbidden' };
const RATE_LIMITED = { error: 'Too many requests. Please try again later.', code: 'rate_limited' };
const BAD_CURSOR = {
  error: 'The request is not valid.',
  code: 'validation_failed',
  issues: [{ path: 'cursor', message: 'Not a cursor this API issued.' }],
};

let smtp: Awaited<ReturnType<typeof startSmtpListener>>;
let server: Awaited<ReturnType<typeof startServer>>;

/** The store most tests use: its owner, staff who may and may not view orders, and a product. */
let owner: Seller;
let viewer: Seller;
let productStaff: Seller;
let store: { id: string; subdomain: string };
let productId: string;
/** Another seller's store, for cross-store checks. */
let otherOwner: Seller;
let otherStore: { id: string; subdomain: string };
let otherProductId: string;

beforeAll(async () => {
  smtp = await startSmtpListener();
  server = await startServer({ SMTP_URL: smtp.url });
  owner = await registerSeller(server.url);
  store = await createStoreFor(owner, 'Pixel Goods');
  productId = (await createProduct(owner, store.id, { name: 'Font Pack' })).id;
  viewer = await registerSeller(server.url);
  await addStaff(owner, store.id, viewer, ['viewOrders']);
  productStaff = await registerSeller(server.url);
  await addStaff(owner, store.id, productStaff, ['manageProducts']);
  otherOwner = await registerSeller(server.url);
  otherStore = await createStoreFor(otherOwner, 'Other Shop');
  otherProductId = (await createProduct(otherOwner, otherStore.id, { name: 'Other Thing' })).id;
});

afterAll(async () => {
  await server?.stop();
  await smtp?.stop();
});

// ---------------------------------------------------------------------------------------------
// Helpers

interface CallOptions {
  method?: string;
  body?: unknown;
  ip?: string;
  cookie?: string;
}

/** A buyer's call; each its own client (X-Forwarded-For behind the trusted proxy) unless `ip` says otherwise. */
function call(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? clientIp() };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.cookie) headers.cookie = opts.cookie;
  return fetch(`${server.url}${path}`, {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
}

interface PlacedOrder {
  id: string;
  token: string;
  email: string;
  number: string;
}

/** A real pending order through the public route (limited per client: each order its own address). */
async function placeOrder(storeId = store.id, product = productId, email = uniqueEmail('buyer')): Promise<PlacedOrder> {
  const response = await call('/api/orders/create', {
    body: { storeId, cart: [{ productId: product, quantity: 1 }], email },
  });
  expect(response.status, await response.clone().text()).toBe(201);
  const body = await response.json();
  return { id: body.order.id, token: body.checkoutToken, email, number: body.order.orderId };
}

function openTicket(body: Record<string, unknown>, opts: Omit<CallOptions, 'body'> = {}): Promise<Response> {
  return call('/api/tickets', { ...opts, body });
}

async function openedTicket(
  order: PlacedOrder,
  subject = 'Where is my key?',
  message = 'I paid but got nothing.',
): Promise<Ticket> {
  const response = await openTicket({ orderId: order.id, token: order.token, subject, message });
  expect(response.status, await response.clone().text()).toBe(201);
  const ticket = (await response.clone().json()) as Ticket;
  // The staff's mail ("The buyer of order ORD-n opened a ticket.") has gone out before the next step counts its own.
  await expect
    .poll(() => smtp.mails.filter((mail) => mail.text.includes(`order ${ticket.orderNumber} opened`)).length, {
      timeout: 5_000,
    })
    .toBeGreaterThanOrEqual(1);
  return ticket;
}

interface Ticket {
  id: string;
  storeId: string;
  orderId: string;
  orderNumber: string;
  subject: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  messages: Array<{ id: string; author: string; body: string; createdAt: string }>;
}

function tickets(storeId: string, ticketId = ''): string {
  return `/api/dashboard/stores/${storeId}/tickets${ticketId ? `/${ticketId}` : ''}`;
}

/** Mail arrived since `seen` (what a step that mails nothing must leave empty). */
function mailsSince(seen: number): ReceivedMail[] {
  return smtp.mails.slice(seen);
}

/**
 * A step's mail: sent after the route answered (by the mail sender), so the mail that arrived
 * since `seen` and carries the step's own `text`, once `count` of them are in (poll, with a deadline).
 */
async function stepMails(seen: number, text: string, count: number): Promise<ReceivedMail[]> {
  const ofStep = () => smtp.mails.slice(seen).filter((mail) => mail.text.includes(text));
  await expect.poll(() => ofStep().length, { timeout: 5_000 }).toBeGreaterThanOrEqual(count);
  return ofStep();
}

function recipients(mails: ReceivedMail[]): string[] {
  return mails.flatMap((mail) => mail.to).sort();
}

function expectNoSecrets(mails: ReceivedMail[], ...secrets: string[]): void {
  for (const mail of mails) {
    for (const secret of secrets) {
      expect(mail.text).not.toContain(secret);
      expect(mail.subject).not.toContain(secret);
    }
  }
}

function customerCookieFrom(response: Response): string {
  const cookie = response.headers.getSetCookie().find((value) => value.startsWith('svc_customer='));
  expect(cookie, 'a svc_customer cookie').toBeDefined();
  return cookie!.split(';')[0]!;
}

/** Signs a buyer in to a store with the e-mailed code; answers the `svc_customer=...` cookie. */
async function signIn(storeId: string, email: string): Promise<string> {
  const ip = clientIp();
  const seen = smtp.mails.length;
  const start = await call('/api/customer/auth/start', { body: { storeId, email }, ip });
  expect(start.status).toBe(204);
  const mail = await smtp.waitFor((m) => smtp.mails.indexOf(m) >= seen && m.to.includes(email));
  const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
  expect(code, mail.text).toBeDefined();
  const verify = await call('/api/customer/auth/verify', { body: { storeId, email, code }, ip });
  expect(verify.status).toBe(200);
  return customerCookieFrom(verify);
}

/** `POST /api/checkout/enter`: answers the `svc_checkout=...` cookie. */
async function enterCheckout(order: PlacedOrder): Promise<string> {
  const response = await call('/api/checkout/enter', { body: { orderId: order.id, token: order.token } });
  expect(response.status).toBe(200);
  const cookie = response.headers.getSetCookie().find((value) => value.startsWith('svc_checkout='));
  expect(cookie, 'a svc_checkout cookie').toBeDefined();
  return cookie!.split(';')[0]!;
}

// ---------------------------------------------------------------------------------------------

describe('buyers open tickets', () => {
  it('opens a ticket with the checkout token and e-mails the staff who may view orders', async () => {
    const order = await placeOrder();
    const seen = smtp.mails.length;
    const response = await openTicket({
      orderId: order.id,
      token: order.token,
      subject: '  Where is my key?  ',
      message: 'I paid but got nothing.\n\tThanks',
    });
    expect(response.status).toBe(201);
    const ticket = await response.json();
    expect(Object.keys(ticket).sort()).toEqual([
      'createdAt',
      'id',
      'livemode',
      'messages',
      'orderId',
      'orderNumber',
      'status',
      'storeId',
      'subject',
      'updatedAt',
    ]);
    expect(ticket).toMatchObject({
      storeId: store.id,
      orderId: order.id,
      orderNumber: order.number,
      subject: 'Where is my key?',
      status: 'open',
    });
    expect(order.number).toMatch(/^ORD-\d+$/);
    expect(ticket.createdAt).toMatch(ISO);
    expect(ticket.updatedAt).toBe(ticket.createdAt);
    expect(ticket.messages).toHaveLength(1);
    expect(Object.keys(ticket.messages[0]).sort()).toEqual(['author', 'body', 'createdAt', 'id']);
    expect(ticket.messages[0]).toMatchObject({ author: 'buyer', body: 'I paid but got nothing.\n\tThanks' });

    // The owner and the staff member with viewOrders; not the one who only manages products.
    const mails = await stepMails(seen, 'I paid but got nothing.', 2);
    expect(recipients(mails)).toEqual([owner.email, viewer.email].sort());
    for (const mail of mails) {
      expect(mail.to).toHaveLength(1);
      expect(mail.subject).toContain('Where is my key?');
      expect(mail.subject).toContain(order.number);
      expect(mail.text).toContain('I paid but got nothing.');
      expect(mail.text).toContain(order.number);
    }
    expectNoSecrets(mails, order.token, order.email);

    // The same view again with the token in the query string.
    const read = await call(`/api/tickets/${ticket.id}?token=${order.token}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(ticket);
  });

  it('opens and reads a ticket with the svc_checkout cookie instead of the token', async () => {
    const order = await placeOrder();
    const cookie = await enterCheckout(order);
    const created = await openTicket(
      { orderId: order.id, subject: 'Invoice', message: 'Please send an invoice.' },
      { cookie },
    );
    expect(created.status).toBe(201);
    const ticket: Ticket = await created.json();
    const read = await call(`/api/tickets/${ticket.id}`, { cookie });
    expect(read.status).toBe(200);
    expect((await read.json()).messages.map((m: { body: string }) => m.body)).toEqual(['Please send an invoice.']);
    const reply = await call(`/api/tickets/${ticket.id}/messages`, { body: { message: 'Company: ACME' }, cookie });
    expect(reply.status).toBe(201);

    // The cookie of another order opens nothing here.
    const other = await placeOrder();
    const elsewhere = await openTicket({ orderId: other.id, subject: 'Hi', message: 'Hello' }, { cookie });
    expect(elsewhere.status).toBe(401);
    expect(await elsewhere.json()).toEqual(NO_CREDENTIAL);
  });

  it("opens and reads a ticket with a customer session on the buyer's own order, 404 on anyone else's", async () => {
    const email = uniqueEmail('customer');
    const order = await placeOrder(store.id, productId, email);
    const cookie = await signIn(store.id, email);
    const created = await openTicket({ orderId: order.id, subject: 'Refund', message: 'Wrong product.' }, { cookie });
    expect(created.status).toBe(201);
    const ticket: Ticket = await created.json();
    expect(ticket).toMatchObject({ orderId: order.id, status: 'open' });

    const read = await call(`/api/tickets/${ticket.id}`, { cookie });
    expect(read.status).toBe(200);
    expect((await read.json()).id).toBe(ticket.id);
    const reply = await call(`/api/tickets/${ticket.id}/messages`, { body: { message: 'Any news?' }, cookie });
    expect(reply.status).toBe(201);

    // Another buyer's order in the same store, and this buyer's address in another store.
    const someoneElse = await placeOrder();
    const foreign = await openTicket({ orderId: someoneElse.id, subject: 'Hi', message: 'Hello' }, { cookie });
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual(ORDER_NOT_FOUND);
    const elsewhere = await placeOrder(otherStore.id, otherProductId, email);
    const otherStoreOrder = await openTicket({ orderId: elsewhere.id, subject: 'Hi', message: 'Hello' }, { cookie });
    expect(otherStoreOrder.status).toBe(404);

    // Someone else's ticket read with this session is 404 as well.
    const theirs = await openedTicket(someoneElse);
    const peek = await call(`/api/tickets/${theirs.id}`, { cookie });
    expect(peek.status).toBe(404);
    expect(await peek.json()).toEqual(TICKET_NOT_FOUND);
    const write = await call(`/api/tickets/${theirs.id}/messages`, { body: { message: 'hi' }, cookie });
    expect(write.status).toBe(404);
  });

  it('answers 401 without a credential, 403 for a wrong token and 404 for an unknown order or ticket', async () => {
    const order = await placeOrder();
    const other = await placeOrder();
    const ticket = await openedTicket(order);

    const none = await openTicket({ orderId: order.id, subject: 'Hi', message: 'Hello' });
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual(NO_CREDENTIAL);
    const wrong = await openTicket({ orderId: order.id, token: other.token, subject: 'Hi', message: 'Hello' });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toEqual(WRONG_TOKEN);
    const unknown = await openTicket({
      orderId: 'zzzzzzzzzzzzzzzzzzzzzzzz',
      token: order.token,
      subject: 'Hi',
      message: 'Hello',
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual(ORDER_NOT_FOUND);

    const readNone = await call(`/api/tickets/${ticket.id}`);
    expect(readNone.status).toBe(401);
    const readWrong = await call(`/api/tickets/${ticket.id}?token=${other.token}`);
    expect(readWrong.status).toBe(403);
    expect(await readWrong.json()).toEqual(WRONG_TOKEN);
    const writeWrong = await call(`/api/tickets/${ticket.id}/messages`, { body: { message: 'x', token: other.token } });
    expect(writeWrong.status).toBe(403);
    const writeNone = await call(`/api/tickets/${ticket.id}/messages`, { body: { message: 'x' } });
    expect(writeNone.status).toBe(401);
    // No credential is 401 whether or not the ticket exists; with one, an unknown ticket is 404.
    expect((await call('/api/tickets/zzzzzzzzzzzzzzzzzzzzzzzz')).status).toBe(401);
    const missing = await call(`/api/tickets/zzzzzzzzzzzzzzzzzzzzzzzz?token=${order.token}`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(TICKET_NOT_FOUND);

    // Nothing was written by the refused calls.
    const read = await call(`/api/tickets/${ticket.id}?token=${order.token}`);
    expect((await read.json()).messages).toHaveLength(1);
  });

  it('refuses control characters other than newline and tab, and blank or over-long text', async () => {
    const order = await placeOrder();
    const base = { orderId: order.id, token: order.token };
    for (const body of [
      { ...base, subject: 'Bell\u0007', message: 'Hello' },
      { ...base, subject: 'Hi', message: 'colour \u001b[31mred' },
      { ...base, subject: 'Hi', message: 'nul \u0000' },
      { ...base, subject: 'Two\nlines', message: 'Hello' },
      { ...base, subject: '   ', message: 'Hello' },
      { ...base, subject: 'Hi', message: '' },
      { ...base, subject: 'x'.repeat(201), message: 'Hello' },
      { ...base, subject: 'Hi', message: 'x'.repeat(5001) },
      { ...base, subject: 'Hi', message: 'Hello', extra: true },
    ]) {
      const response = await openTicket(body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect((await response.json()).code).toBe('validation_failed');
    }
    const ticket = await openedTicket(order, 'x'.repeat(200), 'Line one\r\nLine two\n\tindented');
    const reply = await call(`/api/tickets/${ticket.id}/messages`, {
      body: { message: 'delete \u007f', token: order.token },
    });
    expect(reply.status).toBe(400);
    const staffReply = await dashboard(viewer, 'POST', `${tickets(store.id, ticket.id)}/messages`, {
      message: 'form\u000cfeed',
    });
    expect(staffReply.status).toBe(400);
    const read = await call(`/api/tickets/${ticket.id}?token=${order.token}`);
    expect((await read.json()).messages.map((m: { body: string }) => m.body)).toEqual([
      'Line one\r\nLine two\n\tindented',
    ]);
  });

  it('limits ticket creation to 5 a minute per client: the 6th is 429', async () => {
    const ip = clientIp();
    const order = await placeOrder();
    for (let i = 1; i <= 5; i++) {
      const response = await openTicket(
        { orderId: order.id, token: order.token, subject: `Question ${i}`, message: 'Hello' },
        { ip },
      );
      expect(response.status).toBe(201);
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(5 - i));
    }
    const sixth = await openTicket(
      { orderId: order.id, token: order.token, subject: 'Question 6', message: 'Hello' },
      { ip },
    );
    expect(sixth.status).toBe(429);
    expect(await sixth.json()).toEqual(RATE_LIMITED);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another client is not affected.
    expect(
      (await openTicket({ orderId: order.id, token: order.token, subject: 'Question 7', message: 'Hello' })).status,
    ).toBe(201);
  });
});

describe('staff answer tickets on the dashboard', () => {
  it('runs open -> answered -> open -> closed, e-mailing each message to the other side', async () => {
    const order = await placeOrder();
    const ticket = await openedTicket(order, 'Key does not work', 'It says invalid.');

    // Staff read it and answer: the buyer is e-mailed, nobody else.
    const read = await dashboard(viewer, 'GET', tickets(store.id, ticket.id));
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(ticket);

    let seen = smtp.mails.length;
    const answer = await dashboard(viewer, 'POST', `${tickets(store.id, ticket.id)}/messages`, {
      message: 'Try it without the dashes.',
    });
    expect(answer.status).toBe(201);
    const answered = await answer.json();
    expect(answered).toEqual({
      id: expect.any(String),
      author: 'staff',
      body: 'Try it without the dashes.',
      createdAt: expect.stringMatching(ISO),
    });
    let mails = await stepMails(seen, 'Try it without the dashes.', 1);
    expect(recipients(mails)).toEqual([order.email]);
    expect(mails[0]!.subject).toContain('Key does not work');
    expect(mails[0]!.subject).toContain(order.number);
    expect(mails[0]!.text).toContain('Try it without the dashes.');
    expect(mails[0]!.text).toContain(order.number);
    expect(mails[0]!.text).toContain('Pixel Goods');
    expectNoSecrets(mails, order.token, viewer.email, owner.email);

    let view: Ticket = await (await call(`/api/tickets/${ticket.id}?token=${order.token}`)).json();
    expect(view.status).toBe('answered');
    expect(view.messages.map((m) => [m.author, m.body])).toEqual([
      ['buyer', 'It says invalid.'],
      ['staff', 'Try it without the dashes.'],
    ]);
    // Neither side's view names a staff member or the buyer's address.
    const raw = JSON.stringify(view);
    for (const secret of [viewer.email, viewer.userId, owner.email, order.email, order.token])
      expect(raw).not.toContain(secret);

    // The buyer answers: the ticket reopens and the staff are e-mailed.
    seen = smtp.mails.length;
    const back = await call(`/api/tickets/${ticket.id}/messages`, {
      body: { message: 'Still invalid.', token: order.token },
    });
    expect(back.status).toBe(201);
    expect(await back.json()).toMatchObject({ author: 'buyer', body: 'Still invalid.' });
    mails = await stepMails(seen, 'Still invalid.', 2);
    expect(recipients(mails)).toEqual([owner.email, viewer.email].sort());
    for (const mail of mails) {
      expect(mail.text).toContain('Still invalid.');
      expect(mail.text).toContain('Key does not work');
      expect(mail.text).toContain(order.number);
    }
    expectNoSecrets(mails, order.token);
    view = await (await call(`/api/tickets/${ticket.id}?token=${order.token}`)).json();
    expect(view.status).toBe('open');
    expect(view.messages).toHaveLength(3);

    // Staff close it; the buyer writing again reopens it.
    seen = smtp.mails.length;
    const close = await dashboard(owner, 'PATCH', tickets(store.id, ticket.id), { status: 'closed' });
    expect(close.status).toBe(200);
    const closed: Ticket = await close.json();
    expect(closed.status).toBe('closed');
    expect(closed.messages).toHaveLength(3);
    expect(Date.parse(closed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(view.updatedAt));
    expect(mailsSince(seen)).toEqual([]);
    const answeredStatus = await dashboard(owner, 'PATCH', tickets(store.id, ticket.id), { status: 'answered' });
    expect(answeredStatus.status).toBe(400);
    const reopen = await dashboard(owner, 'PATCH', tickets(store.id, ticket.id), { status: 'open' });
    expect((await reopen.json()).status).toBe('open');
    await dashboard(owner, 'PATCH', tickets(store.id, ticket.id), { status: 'closed' });
    const again = await call(`/api/tickets/${ticket.id}/messages`, {
      body: { message: 'One more thing.', token: order.token },
    });
    expect(again.status).toBe(201);
    expect((await (await call(`/api/tickets/${ticket.id}?token=${order.token}`)).json()).status).toBe('open');
  });

  it('lists newest activity first with the buyer and message counts, filters by status and pages with a signed cursor', async () => {
    const seller = await registerSeller(server.url);
    const shop = await createStoreFor(seller);
    const product = (await createProduct(seller, shop.id)).id;
    const made: Array<{ ticket: Ticket; order: PlacedOrder }> = [];
    for (let i = 0; i < 5; i++) {
      const order = await placeOrder(shop.id, product);
      made.push({ ticket: await openedTicket(order, `Ticket ${i}`, 'Hello'), order });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Answering the oldest makes it the newest activity.
    const answer = await dashboard(seller, 'POST', `${tickets(shop.id, made[0]!.ticket.id)}/messages`, {
      message: 'Answered.',
    });
    expect(answer.status).toBe(201);

    const all = await dashboard(seller, 'GET', tickets(shop.id));
    expect(all.status).toBe(200);
    const list = await all.json();
    expect(list.hasMore).toBe(false);
    expect(list.nextCursor).toBeNull();
    expect(list.tickets.map((t: { subject: string }) => t.subject)).toEqual([
      'Ticket 0',
      'Ticket 4',
      'Ticket 3',
      'Ticket 2',
      'Ticket 1',
    ]);
    expect(list.tickets[0]).toEqual({
      id: made[0]!.ticket.id,
      storeId: shop.id,
      livemode: true,
      orderId: made[0]!.order.id,
      orderNumber: made[0]!.order.number,
      customerEmail: made[0]!.order.email,
      subject: 'Ticket 0',
      status: 'answered',
      createdAt: made[0]!.ticket.createdAt,
      updatedAt: expect.stringMatching(ISO),
      messageCount: 2,
    });
    expect(list.tickets[1].messageCount).toBe(1);

    const open = await (await dashboard(seller, 'GET', `${tickets(shop.id)}?status=open`)).json();
    expect(open.tickets.map((t: { subject: string }) => t.subject)).toEqual([
      'Ticket 4',
      'Ticket 3',
      'Ticket 2',
      'Ticket 1',
    ]);
    const answeredOnly = await (await dashboard(seller, 'GET', `${tickets(shop.id)}?status=answered`)).json();
    expect(answeredOnly.tickets.map((t: { id: string }) => t.id)).toEqual([made[0]!.ticket.id]);

    const seenIds: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const page = await (await dashboard(seller, 'GET', `${tickets(shop.id)}${query}`)).json();
      expect(page.tickets.length).toBeLessThanOrEqual(2);
      seenIds.push(...page.tickets.map((t: { id: string }) => t.id));
      cursor = page.nextCursor;
      expect(page.hasMore).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seenIds).toEqual(list.tickets.map((t: { id: string }) => t.id));

    const first = await (await dashboard(seller, 'GET', `${tickets(shop.id)}?limit=2`)).json();
    const forged = await dashboard(
      seller,
      'GET',
      `${tickets(shop.id)}?limit=2&cursor=${encodeURIComponent(first.nextCursor.replace(/^./, 'x'))}`,
    );
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual(BAD_CURSOR);
    expect((await dashboard(seller, 'GET', `${tickets(shop.id)}?status=pending`)).status).toBe(400);
    expect((await dashboard(seller, 'GET', `${tickets(shop.id)}?limit=0`)).status).toBe(400);

    // Other stores' tickets never appear.
    const mine = await (await dashboard(owner, 'GET', `${tickets(store.id)}?limit=100`)).json();
    expect(mine.tickets.some((t: { storeId: string }) => t.storeId !== store.id)).toBe(false);
    expect(mine.tickets.some((t: { id: string }) => made.some((m) => m.ticket.id === t.id))).toBe(false);
  });

  it("needs viewOrders in this store: staff without it and other stores' members are 403, other stores' tickets 404", async () => {
    const order = await placeOrder();
    const ticket = await openedTicket(order);
    const path = tickets(store.id, ticket.id);

    for (const [method, url, body] of [
      ['GET', tickets(store.id), undefined],
      ['GET', path, undefined],
      ['POST', `${path}/messages`, { message: 'hi' }],
      ['PATCH', path, { status: 'closed' }],
    ] as const) {
      const staff = await dashboard(productStaff, method, url, body);
      expect(staff.status, `${method} ${url}`).toBe(403);
      expect(await staff.json()).toEqual(NO_VIEW_ORDERS);
      const stranger = await dashboard(otherOwner, method, url, body);
      expect(stranger.status, `${method} ${url}`).toBe(403);
      expect(await stranger.json()).toEqual(NOT_A_MEMBER);
      const anonymous = await fetch(`${server.url}${url}`, {
        method,
        headers: body ? { 'content-type': 'application/json' } : {},
        body: body ? JSON.stringify(body) : undefined,
      });
      expect(anonymous.status, `${method} ${url}`).toBe(401);
    }

    // The other store's owner names their own store: this ticket is not theirs.
    const otherPath = tickets(otherStore.id, ticket.id);
    for (const [method, url, body] of [
      ['GET', otherPath, undefined],
      ['POST', `${otherPath}/messages`, { message: 'hi' }],
      ['PATCH', otherPath, { status: 'closed' }],
    ] as const) {
      const response = await dashboard(otherOwner, method, url, body);
      expect(response.status, `${method} ${url}`).toBe(404);
      expect(await response.json()).toEqual(TICKET_NOT_FOUND);
    }
    // A staff POST without the CSRF token is refused.
    const noCsrf = await fetch(`${server.url}${path}/messages`, {
      method: 'POST',
      headers: { cookie: viewer.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hi' }),
    });
    expect(noCsrf.status).toBe(403);

    // Nothing changed.
    const view: Ticket = await (await call(`/api/tickets/${ticket.id}?token=${order.token}`)).json();
    expect(view.status).toBe('open');
    expect(view.messages).toHaveLength(1);
  });
});
