import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, logFormat, redactUrl } from './logger.js';

describe('redactUrl', () => {
  it('hides credentials carried in the query string, and nothing else', () => {
    expect(redactUrl('/api/orders/abc/delivery?token=SECRET&x=1')).toBe(
      '/api/orders/abc/delivery?token=[redacted]&x=1',
    );
    expect(redactUrl('/api/orders/a/files/b?expires=1&sig=deadbeef')).toBe(
      '/api/orders/a/files/b?expires=1&sig=[redacted]',
    );
    expect(redactUrl('/api/orders/a/keys?email=a%40b.c')).toBe('/api/orders/a/keys?email=[redacted]');
    expect(redactUrl('/api/store/demo')).toBe('/api/store/demo');
  });

  it('hides every parameter whose name says it is a secret', () => {
    expect(
      redactUrl(
        '/x?api_key=sk_1&apiKey=sk_2&key=k&secret=s&client_secret=c&password=p&code=123456&checkout_token=t&limit=5',
      ),
    ).toBe(
      '/x?api_key=[redacted]&apiKey=[redacted]&key=[redacted]&secret=[redacted]&client_secret=[redacted]&password=[redacted]&code=[redacted]&checkout_token=[redacted]&limit=5',
    );
    expect(redactUrl('/x?monkey=1&status=paid')).toBe('/x?monkey=1&status=paid');
  });

  // Each name is a query parameter whose value is a credential or personal data (issue 26).
  it.each([
    'pwd',
    'passwd',
    'password',
    'new_password',
    'auth',
    'auth_code',
    'session',
    'session_id',
    'sessionId',
    'sid',
    'license_key',
    'licenseKey',
    'LICENSE-KEY',
    'private_key',
    'privateKey',
    'csrf',
    'csrf_token',
    'xsrf',
    'otp',
    'jwt',
    'secret',
    'client_secret',
    'api_key',
    'apiKey',
    'apikey',
    'access_token',
    'refresh_token',
    'id_token',
    'token',
    'checkoutToken',
    'key',
    'keys',
    'sig',
    'signature',
    'code',
    'email',
    'customerEmail',
    'buyer_email',
    'e-mail',
    'api%5Fkey',
  ])('redacts the query parameter %s', (name) => {
    expect(redactUrl(`/x?limit=5&${name}=S3CRET&b=2`)).toBe(`/x?limit=5&${name}=[redacted]&b=2`);
  });

  // Ordinary ids and settings stay readable: a log line must still say what was asked.
  it.each([
    'orderId',
    'productId',
    'storeId',
    'keyId',
    'key_id',
    'webhookId',
    'status',
    'limit',
    'cursor',
    'expires',
    'monkey',
    'design',
    'author',
    'authorId',
    'assignee',
    'inside',
    'country_code',
    'couponCode',
    'page',
    'batch',
  ])('keeps the query parameter %s', (name) => {
    expect(redactUrl(`/x?${name}=visible&token=t`)).toBe(`/x?${name}=visible&token=[redacted]`);
  });

  const trpcInput = (input: unknown) => encodeURIComponent(JSON.stringify(input));
  const decodedInput = (url: string) =>
    JSON.parse(decodeURIComponent(new URL(url, 'http://x').search.match(/[?&]input=([^&]*)/)![1]!)) as unknown;

  it('redacts the secret fields of a tRPC GET input by the same names', () => {
    const url = redactUrl(`/trpc/fulfilment.keys?input=${trpcInput({ orderId: 'ord_1', token: 'TOKEN-SECRET' })}`)!;
    expect(url).not.toContain('TOKEN-SECRET');
    expect(url.startsWith('/trpc/fulfilment.keys?input=')).toBe(true);
    expect(decodedInput(url)).toEqual({ orderId: 'ord_1', token: '[redacted]' });
    // The marker reads as in every other redacted value.
    expect(url).toContain('[redacted]');

    const byEmail = redactUrl(
      `/trpc/fulfilment.delivery?input=${trpcInput({ orderId: 'ord_1', email: 'buyer@example.test' })}`,
    )!;
    expect(byEmail).not.toContain('buyer');
    expect(decodedInput(byEmail)).toEqual({ orderId: 'ord_1', email: '[redacted]' });
  });

  it('redacts every call of a batched tRPC GET, nested fields included, and keeps the other parameters', () => {
    const input = {
      '0': { orderId: 'ord_1', token: 'TOKEN-SECRET' },
      '1': { orderId: 'ord_2', email: 'buyer@example.test' },
      '2': { storeId: 'st_1', filter: { licenseKey: 'KEY-SECRET', status: 'active' }, list: [{ apiKey: 'sk_SECRET' }] },
    };
    const url = redactUrl(
      `/trpc/fulfilment.keys,fulfilment.delivery,x.y?batch=1&input=${trpcInput(input)}&sig=SIG-SECRET`,
    )!;
    expect(url).not.toMatch(/SECRET|buyer/);
    expect(url).toMatch(/^\/trpc\/fulfilment\.keys,fulfilment\.delivery,x\.y\?batch=1&input=.*&sig=\[redacted\]$/);
    expect(decodedInput(url)).toEqual({
      '0': { orderId: 'ord_1', token: '[redacted]' },
      '1': { orderId: 'ord_2', email: '[redacted]' },
      '2': {
        storeId: 'st_1',
        filter: { licenseKey: '[redacted]', status: 'active' },
        list: [{ apiKey: '[redacted]' }],
      },
    });
  });

  it('keeps a tRPC input without secrets as the client sent it', () => {
    const url = `/trpc/checkout.cart?input=${trpcInput({ storeId: 'st_1', cart: '[{"productId":"p","quantity":1}]' })}`;
    expect(redactUrl(url)).toBe(url);
    expect(redactUrl('/trpc/catalog.storefront?input={"subdomain":"acme"}')).toBe(
      '/trpc/catalog.storefront?input={"subdomain":"acme"}',
    );
  });

  it('redacts a tRPC input it cannot read as a whole', () => {
    expect(redactUrl('/trpc/fulfilment.keys?input=%7B%22token%22%3A%22TOKEN-SECRET')).toBe(
      '/trpc/fulfilment.keys?input=[redacted]',
    );
    expect(redactUrl('/trpc/fulfilment.keys?input=%E0%A4%A')).toBe('/trpc/fulfilment.keys?input=[redacted]');
  });
});

describe('log format', () => {
  it('is JSON in production whatever is asked, LOG_FORMAT when set, else pretty only on a terminal', () => {
    expect(logFormat({ NODE_ENV: 'production', LOG_FORMAT: 'pretty' }, true)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
    expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({}, false)).toBe('json');
  });

  function capture(format: 'json' | 'pretty') {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    return { log: createLogger('info', { format, destination }), lines };
  }

  const requestLine = {
    req: { method: 'GET', url: '/api/orders/abc/delivery?token=SECRET', headers: { authorization: 'Bearer sk_x' } },
    res: { statusCode: 200 },
    responseTime: 3.14159,
  };

  it('writes a request as one JSON object with the path the client sent, redacted', () => {
    const { log, lines } = capture('json');
    log.info(requestLine, 'request completed');
    const line = JSON.parse(lines[0]!);
    expect(line.req.url).toBe('/api/orders/abc/delivery?token=[redacted]');
    expect(line.req.headers.authorization).toBe('[redacted]');
  });

  it('censors the secret fields of whatever a line logs, errors included, and keeps the rest', () => {
    const { log, lines } = capture('json');
    const err = Object.assign(new Error('boom'), { token: 'TOKEN-SECRET' });
    log.error(
      {
        input: { password: 'PW-SECRET', email: 'a@b.c' },
        err,
        account: { apiKey: 'sk_SECRET', key: 'KEY-SECRET' },
        count: 3,
      },
      'failed',
    );
    const line = JSON.parse(lines[0]!);
    expect(line.input).toEqual({ password: '[redacted]', email: 'a@b.c' });
    expect(line.account).toEqual({ apiKey: '[redacted]', key: '[redacted]' });
    expect(line.err).toMatchObject({ message: 'boom', token: '[redacted]' });
    expect(line.err.stack).toContain('boom');
    expect(line.count).toBe(3);
    expect(lines[0]).not.toMatch(/SECRET/);
  });

  it('logs a database error, and whatever it caused, by its SQLSTATE, constraint and table: never the statement or the row', () => {
    const { log, lines } = capture('json');
    const refused = Object.assign(
      new Error(
        `insert into "product" ("name", "delivery_instructions") values ('Course', 'PAID-CONTENT') - new row for relation "product" violates check constraint "product_price_check"`,
      ),
      {
        name: 'CheckConstraintViolationException',
        code: '23514',
        severity: 'ERROR',
        detail: 'Failing row contains (p1, Course, PAID-CONTENT).',
        constraint: 'product_price_check',
        table: 'product',
      },
    );
    // tRPC's wrapper takes the message of what it wraps.
    const wrapped = Object.assign(new Error(refused.message, { cause: refused }), { name: 'TRPCError' });
    log.error({ err: refused }, 'procedure failed');
    log.error({ err: wrapped }, 'request failed in tRPC');
    expect(lines).toHaveLength(2);
    for (const text of lines) {
      expect(text).not.toMatch(/PAID-CONTENT|Course|Failing row|insert into/);
      const line = JSON.parse(text);
      expect(line.err.database).toMatchObject({
        sqlState: '23514',
        constraint: 'product_price_check',
        table: 'product',
      });
      expect(line.err.code).toBe('23514');
      expect(line.err.message).toBe(
        'the database refused a statement: SQLSTATE 23514 (constraint product_price_check, table product)',
      );
      expect(line.err.stack).toMatch(/^\s*at /);
    }
    expect(JSON.parse(lines[1]!).err.type).toBe('TRPCError');
  });

  it('logs a statement the connection failed under by the driver’s words alone', () => {
    const { log, lines } = capture('json');
    const lost = Object.assign(
      new Error(`update "customer" set "email" = 'buyer@PRIVATE.test' - Connection terminated unexpectedly`),
      { name: 'DriverException' },
    );
    log.error({ err: lost }, 'procedure failed');
    expect(lines[0]).not.toContain('PRIVATE');
    expect(JSON.parse(lines[0]!).err).toMatchObject({
      type: 'DriverException',
      message: 'a statement failed: Connection terminated unexpectedly',
    });
  });

  it('censors every credential header of a request and of a response', () => {
    const { log, lines } = capture('json');
    const headers = {
      authorization: 'Bearer A-SECRET',
      cookie: 'svc_session=C-SECRET',
      'x-csrf-token': 'X-SECRET',
      'idempotency-key': 'I-SECRET',
      'user-agent': 'ua',
    };
    log.info(
      { req: { method: 'GET', url: '/x', headers }, res: { statusCode: 200, headers: { 'set-cookie': 'S-SECRET' } } },
      'request completed',
    );
    const line = JSON.parse(lines[0]!);
    expect(line.req.headers).toEqual({
      authorization: '[redacted]',
      cookie: '[redacted]',
      'x-csrf-token': '[redacted]',
      'idempotency-key': '[redacted]',
      'user-agent': 'ua',
    });
    expect(line.res.headers['set-cookie']).toBe('[redacted]');
    expect(lines[0]).not.toMatch(/SECRET/);
    // The request's own headers are left as they were.
    expect(headers.authorization).toBe('Bearer A-SECRET');
  });

  it.each([
    'x-api-key',
    'api-key',
    'x-auth-token',
    'proxy-authorization',
    'x-license-key',
    'x-session-id',
    'x-jwt',
    'x-otp',
    'x-webhook-secret',
    'stripe-signature',
  ])('censors the %s header', (name) => {
    const { log, lines } = capture('json');
    log.info(
      { req: { method: 'GET', url: '/x', headers: { [name]: 'H-SECRET', 'user-agent': 'ua', 'x-request-id': 'r1' } } },
      'request completed',
    );
    const line = JSON.parse(lines[0]!);
    expect(line.req.headers).toEqual({ [name]: '[redacted]', 'user-agent': 'ua', 'x-request-id': 'r1' });
  });

  it('redacts a Referer (and a Location) like the request URL', () => {
    const { log, lines } = capture('json');
    log.info(
      {
        req: {
          method: 'GET',
          url: '/x',
          headers: {
            referer: 'https://shop.example/checkout/ORD-1?token=R-SECRET&step=2',
            origin: 'https://shop.example',
          },
        },
        res: { statusCode: 302, headers: { location: '/checkout/ORD-1?token=L-SECRET' } },
      },
      'request completed',
    );
    const line = JSON.parse(lines[0]!);
    expect(line.req.headers.referer).toBe('https://shop.example/checkout/ORD-1?token=[redacted]&step=2');
    expect(line.req.headers.origin).toBe('https://shop.example');
    expect(line.res.headers.location).toBe('/checkout/ORD-1?token=[redacted]');
    expect(lines[0]).not.toMatch(/SECRET/);
  });

  it('redacts the tRPC input of a request line', () => {
    const { log, lines } = capture('json');
    const input = encodeURIComponent(JSON.stringify({ orderId: 'ord_1', token: 'TOKEN-SECRET' }));
    log.info({ req: { method: 'GET', url: `/trpc/fulfilment.keys?input=${input}` } }, 'request completed');
    expect(lines[0]).not.toContain('TOKEN-SECRET');
  });

  it('writes a request as one readable line on a terminal', () => {
    const { log, lines } = capture('pretty');
    log.info(requestLine, 'request completed');
    log.warn('no REDIS_URL: rate limits are kept in this process only');
    expect(lines).toHaveLength(2);
    // eslint-disable-next-line no-control-regex
    const plain = lines.map((line) => line.replace(/\u001b\[[0-9;]*m/g, ''));
    expect(plain[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/api\/orders\/abc\/delivery\?token=\[redacted\] 200 3\.1 ms$/,
    );
    expect(plain[1]).toMatch(/WARN: no REDIS_URL/);
    expect(lines.join('\n')).not.toContain('SECRET');
    expect(lines.join('\n')).not.toContain('{');
  });
});
