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
