/** The soak's requests: one open-loop HTTP request, and a signed test-gateway notification. */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { REQUEST_TIMEOUT_MS } from './knobs.mjs';

/** One request; resolves { status, ms, text } (status 0 on a socket error or timeout, with the error as text). */
export function send(agent, url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve) => {
    const start = performance.now();
    const payload = body === undefined ? undefined : Buffer.from(body);
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            ms: performance.now() - start,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', (error) =>
          resolve({ status: 0, ms: performance.now() - start, text: `response error: ${error.message}` }),
        );
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.on('error', (error) =>
      resolve({ status: 0, ms: performance.now() - start, text: `request error: ${error.message}` }),
    );
    req.end(payload);
  });
}

/** A payment.succeeded notification, signed as test/support/payments.ts signs. */
export function signedNotification(secret, orderId, amount) {
  const body = JSON.stringify({
    id: `tevt_${randomBytes(8).toString('hex')}`,
    type: 'payment.succeeded',
    orderId,
    amount,
    currency: 'USD',
  });
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return { body, signature: `t=${t},v1=${v1}` };
}
