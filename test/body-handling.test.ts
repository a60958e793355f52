/** Bodies, strict typing and the error model, over real HTTP on both transports. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProbeRouter } from './support/probe-router.js';
import { startInProcess, type InProcessApp } from './support/in-process.js';

let app: InProcessApp;

beforeAll(async () => {
  app = await startInProcess({ router: createProbeRouter(), env: { BODY_LIMIT_BYTES: '4096' } });
});
afterAll(() => app?.close());

function post(path: string, body: string, contentType = 'application/json') {
  return fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
}

describe('JSON bodies', () => {
  it('answers invalid JSON with 400 invalid_json in our body on REST', async () => {
    const response = await post('/api/probe/toggle', '{"flag": tru');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'The request body is not valid JSON.', code: 'invalid_json' });
  });

  it('answers invalid JSON on /trpc with 400 and code invalid_json', async () => {
    const response = await post('/trpc/probe.toggle', '{"flag": tru');
    expect(response.status).toBe(400);
    const { error } = await response.json();
    expect(error.data.code).toBe('invalid_json');
    expect(JSON.stringify(error)).not.toContain('tru');
  });

  it('refuses a __proto__ key', async () => {
    const response = await post('/api/probe/toggle', '{"flag":true,"__proto__":{"admin":true}}');
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe('invalid_json');
  });

  it('answers a body that is not application/json with 415', async () => {
    const response = await post('/api/probe/toggle', 'flag=true', 'application/x-www-form-urlencoded');
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({
      error: 'Send the body as application/json.',
      code: 'unsupported_media_type',
    });
  });

  it('answers a body over the limit with 413', async () => {
    const response = await post('/api/probe/toggle', JSON.stringify({ flag: true, pad: 'x'.repeat(10_000) }));
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'The request body is too large.', code: 'payload_too_large' });
  });

  it('reads a refused body to its end, so a client still sending it gets the 413 and keeps its connection', async () => {
    const { Agent, request } = await import('node:http');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (body: string) =>
      new Promise<{ status: number; text: string; socket: unknown }>((resolve, reject) => {
        const req = request(
          `${app.url}/api/probe/toggle`,
          {
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text, socket: req.socket }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    try {
      // 4 MiB against a 4 KiB limit: the answer comes long before the upload ends.
      const refused = await send(JSON.stringify({ flag: true, pad: 'x'.repeat(4 * 1024 * 1024) }));
      expect(refused.status).toBe(413);
      expect(JSON.parse(refused.text)).toEqual({ error: 'The request body is too large.', code: 'payload_too_large' });
      const next = await send(JSON.stringify({ flag: true }));
      expect(next.status).toBe(200);
      expect(next.socket).toBe(refused.socket);
    } finally {
      agent.destroy();
    }
  });

  it('takes a POST with no body, with or without a JSON content type', async () => {
    const bare = await fetch(`${app.url}/api/probe/touch`, { method: 'POST' });
    expect(bare.status).toBe(200);
    expect(await bare.json()).toEqual({ ok: true });
    const typed = await fetch(`${app.url}/api/probe/touch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(typed.status).toBe(200);
  });

  it('answers an unknown body field with 400 naming the field', async () => {
    const response = await post('/api/probe/toggle', JSON.stringify({ flag: true, status: 'paid' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'The request is not valid.',
      code: 'validation_failed',
      issues: [{ path: 'status', message: 'Unknown field.' }],
    });
  });
});

describe('input limits, on both transports', () => {
  const deep = (depth: number) => `{"flag":true,"deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;

  it('refuses JSON nested past 32 levels (10,000 once overflowed the adapter stack: a 500; the sweep sends that) and takes 30', async () => {
    // 1,500 levels: this app's body limit is 4 KB.
    const rest = await post('/api/probe/toggle', deep(1_500));
    expect(rest.status).toBe(400);
    expect(await rest.json()).toEqual({
      error: 'The request is not valid.',
      code: 'validation_failed',
      issues: [{ path: '', message: 'The JSON is nested deeper than 32 levels.' }],
    });
    const trpc = await post('/trpc/probe.toggle', deep(1_500));
    expect(trpc.status).toBe(400);
    expect((await trpc.json()).error.data).toMatchObject({ code: 'validation_failed', httpStatus: 400 });
    const query = await fetch(
      `${app.url}/trpc/probe.page?input=${encodeURIComponent('['.repeat(2_000) + ']'.repeat(2_000))}`,
    );
    expect(query.status).toBe(400);
    expect((await query.json()).error.data.code).toBe('validation_failed');
    // Within the limit the body reaches the procedure (which names the unknown field).
    const within = await post('/api/probe/toggle', deep(30));
    expect((await within.json()).issues).toEqual([{ path: 'deep', message: 'Unknown field.' }]);
  });

  it('refuses a NUL or a lone surrogate in a string, and -0 or 1e309 as a number, naming the field on REST and /trpc', async () => {
    for (const [body, message] of [
      ['{"flag":true,"name":"a\\u0000b"}', 'Must not contain a NUL character.'],
      ['{"flag":true,"name":"a\\ud800b"}', 'Must not contain a lone UTF-16 surrogate.'],
      ['{"flag":true,"count":-0}', 'Must not be -0.'],
      ['{"flag":true,"count":1e309}', 'Must be a finite number.'],
    ] as const) {
      const rest = await post('/api/probe/toggle', body);
      expect(rest.status, body).toBe(400);
      const path = body.includes('name') ? 'name' : 'count';
      expect(await rest.json(), body).toEqual({
        error: 'The request is not valid.',
        code: 'validation_failed',
        issues: [{ path, message }],
      });
      const trpc = await post('/trpc/probe.toggle', body);
      expect(trpc.status, body).toBe(400);
      expect((await trpc.json()).error.data, body).toMatchObject({
        code: 'validation_failed',
        issues: [{ path, message }],
      });
    }
  });

  it('refuses an empty body sent as JSON where the route reads a body, and a URL that is not percent-encoded UTF-8', async () => {
    const empty = await post('/api/probe/toggle', '');
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({
      error: 'The request is not valid.',
      code: 'validation_failed',
      issues: [{ path: '', message: 'The body is empty: send a JSON object.' }],
    });
    for (const path of [
      '/api/probe/items/%ff',
      '/api/probe/page?x=%ff',
      '/api/probe/page?x=%00',
      '/api/probe/items/%ED%A0%80',
    ]) {
      const response = await fetch(`${app.url}${path}`, { method: path.includes('items') ? 'DELETE' : 'GET' });
      expect(response.status, path).toBe(400);
      expect((await response.json()).code, path).toBe('validation_failed');
    }
  });
});

describe('strict typing survives trpc-to-openapi coercion', () => {
  it('refuses {"flag":"false"} on REST and /trpc, before and after a REST call', async () => {
    const refuseOnBoth = async () => {
      const rest = await post('/api/probe/toggle', '{"flag":"false"}');
      expect(rest.status).toBe(400);
      expect((await rest.json()).issues[0].path).toBe('flag');
      const rpc = await post('/trpc/probe.toggle', '{"flag":"false"}');
      expect(rpc.status).toBe(400);
      expect((await rpc.json()).error.data.code).toBe('validation_failed');
      const numeric = await post('/api/probe/toggle', '{"flag":true,"count":"5"}');
      expect(numeric.status).toBe(400);
    };
    await refuseOnBoth();
    // A valid REST call is what makes trpc-to-openapi switch coercion on.
    const ok = await post('/api/probe/toggle', '{"flag":false,"count":5}');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ flag: false, count: 5 });
    await refuseOnBoth();
  });

  it('coerces query strings where the schema says so, and only numbers that are numbers', async () => {
    expect(await (await fetch(`${app.url}/api/probe/page?limit=20`)).json()).toEqual({ limit: 20 });
    expect((await fetch(`${app.url}/api/probe/page?limit=abc`)).status).toBe(400);
    expect((await fetch(`${app.url}/api/probe/page?limit=0`)).status).toBe(400);
    expect((await fetch(`${app.url}/api/probe/page?limit=2.5`)).status).toBe(400);
  });
});

describe('internal errors', () => {
  it('answers 500 with a body that says nothing of the cause, on REST and /trpc', async () => {
    const rest = await post('/api/probe/explode', '{}');
    expect(rest.status).toBe(500);
    const restText = await rest.text();
    expect(JSON.parse(restText)).toEqual({ error: 'Internal server error.', code: 'internal_error' });
    const rpc = await post('/trpc/probe.explode', '{}');
    expect(rpc.status).toBe(500);
    const rpcText = await rpc.text();
    for (const text of [restText, rpcText]) {
      expect(text).not.toMatch(/secret_table|SELECT|hunter2|stack|at /);
    }
    expect(JSON.parse(rpcText).error.data.code).toBe('internal_error');
  });

  it('treats an output that fails its schema as internal, leaking nothing', async () => {
    const response = await fetch(`${app.url}/api/probe/bad-output`);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain('hunter2');
    expect(JSON.parse(text).code).toBe('internal_error');
  });
});

describe('statuses', () => {
  it('answers 201 for a create and 204 with no body for a delete', async () => {
    const created = await post('/api/probe/items', '{"name":"a"}');
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ name: 'a' });
    const removed = await fetch(`${app.url}/api/probe/items/abc`, { method: 'DELETE' });
    expect(removed.status).toBe(204);
    expect(await removed.text()).toBe('');
  });

  it('answers an unknown path with 404 in our body, inside and outside /api', async () => {
    for (const path of ['/api/nothing/here', '/nothing']) {
      const response = await fetch(`${app.url}${path}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'Not found.', code: 'not_found' });
    }
  });

  it('refuses a tRPC batch larger than the configured maximum', async () => {
    const calls = Array.from({ length: 21 }, () => 'probe.page');
    const input = Object.fromEntries(calls.map((_, i) => [String(i), {}]));
    const response = await fetch(
      `${app.url}/trpc/${calls.join(',')}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`,
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await response.json()).error.data.code).toBe('validation_failed');
  });

  it('types every /trpc refusal as JSON: a body that is not JSON, a batch over the maximum, an unknown procedure', async () => {
    const refusals = [
      await post('/trpc/probe.toggle', 'flag=true', 'application/x-www-form-urlencoded'),
      await post('/trpc/probe.toggle', 'flag=true', 'text/plain'),
      await post(`/trpc/${Array.from({ length: 21 }, () => 'probe.touch').join(',')}?batch=1`, '{}'),
      await post('/trpc/probe.nothing', '{}'),
    ];
    expect(refusals.map((response) => response.status)).toEqual([415, 415, 400, 404]);
    const codes: string[] = [];
    for (const response of refusals) {
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await response.json();
      // A form body never reaches tRPC: the server's own parser refuses it, in our REST body.
      codes.push(body.code ?? body.error.data.code);
    }
    expect(codes).toEqual(['unsupported_media_type', 'unsupported_media_type', 'validation_failed', 'not_found']);
  });
});

describe('tRPC batches', () => {
  const batch = (procedure: string, count: number) => ({
    path: `/trpc/${Array.from({ length: count }, () => procedure).join(',')}?batch=1`,
    input: Object.fromEntries(Array.from({ length: count }, (_, i) => [String(i), { n: i }])),
  });

  it("runs a batch's mutations one after another, in the batch's order, each with its own answer", async () => {
    const { path, input } = batch('probe.turn', 20);
    const response = await post(path, JSON.stringify(input));
    expect(response.status).toBe(200);
    const answers = (await response.json()).map((answer: { result: { data: unknown } }) => answer.result.data);
    expect(answers.map((turn: { n: number }) => turn.n)).toEqual([...Array(20).keys()]);
    // Each began with none beside it, after the one before it in the batch.
    expect(answers.map((turn: { alongside: number }) => turn.alongside)).toEqual(Array(20).fill(0));
    const orders = answers.map((turn: { order: number }) => turn.order);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
  });

  it('takes the next mutation of a batch after one that failed', async () => {
    const path = '/trpc/probe.turn,probe.explode,probe.turn?batch=1';
    const response = await post(path, JSON.stringify({ 0: { n: 1 }, 1: {}, 2: { n: 2 } }));
    const answers = await response.json();
    expect(answers[1].error.data.code).toBe('internal_error');
    expect([answers[0].result.data.alongside, answers[2].result.data]).toEqual([
      0,
      expect.objectContaining({ n: 2, alongside: 0 }),
    ]);
  });

  it("runs a batch's queries together", async () => {
    const { path, input } = batch('probe.readTurn', 5);
    const response = await fetch(`${app.url}${path}&input=${encodeURIComponent(JSON.stringify(input))}`);
    expect(response.status).toBe(200);
    const answers = (await response.json()).map((answer: { result: { data: unknown } }) => answer.result.data);
    expect(Math.max(...answers.map((turn: { alongside: number }) => turn.alongside))).toBeGreaterThan(0);
  });
});

describe('security headers', () => {
  /** helmet's defaults as svc configures them (http/security-headers.ts), on answers of every kind. */
  const EXPECTED = {
    'content-security-policy': "default-src 'none';frame-ancestors 'none'",
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'referrer-policy': 'no-referrer',
    'strict-transport-security': 'max-age=31536000; includeSubDomains',
    'x-content-type-options': 'nosniff',
  };

  it('are on a JSON answer, a refusal, an unknown path and a tRPC call, once each', async () => {
    const answers = [
      await post('/api/probe/toggle', '{"flag":true}'),
      await post('/api/probe/toggle', '{"flag": tru'),
      await fetch(`${app.url}/api/nothing/here`),
      await fetch(`${app.url}/trpc/probe.page?input=${encodeURIComponent('{}')}`),
    ];
    expect(answers.map((response) => response.status)).toEqual([200, 400, 404, 200]);
    for (const response of answers) {
      for (const [name, value] of Object.entries(EXPECTED))
        expect(response.headers.get(name), `${response.url} ${name}`).toBe(value);
      expect(response.headers.has('x-frame-options'), response.url).toBe(false);
    }
  });

  it('give way to a route that states its own policy (the API reference)', async () => {
    const docs = await fetch(`${app.url}/docs/`);
    expect(docs.status).toBe(200);
    const csp = docs.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("default-src 'none'");
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
