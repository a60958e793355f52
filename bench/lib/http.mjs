/**
 * Small JSON client on node:http for set-up calls (not for load). `localAddress` picks the
 * loopback source address, so per-IP budgets such as auth.register (3 per hour per client
 * address, kept in the shared Redis) are spent by this run's own address and never by the
 * 127.0.0.1 that tests and colleagues use.
 */
import http from 'node:http';

export function request(url, { method = 'GET', headers = {}, body, localAddress } = {}) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        localAddress,
        agent: false,
        headers: {
          accept: 'application/json',
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          ...headers,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${url}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Throws with the body when the status is not the expected one. */
export async function expectStatus(responsePromise, status, what) {
  const response = await responsePromise;
  if (response.status !== status)
    throw new Error(`${what}: expected ${status}, got ${response.status}: ${response.text.slice(0, 500)}`);
  return response;
}
