// A webhook endpoint that verifies every request before trusting it. It registers itself with
// the store (outside production, http://localhost endpoints are allowed), asks the service for
// a test event, verifies it, and exits.
//   SVC_API_KEY=sk_... SVC_STORE_ID=... node packages/sdk/examples/webhook-receiver.mjs
import { createServer } from 'node:http';
import { constructEvent, createMerchantClient, WebhookVerificationError } from '@svc/sdk';

const svc = createMerchantClient({
  baseUrl: process.env.SVC_BASE_URL ?? 'http://localhost:3000',
  apiKey: process.env.SVC_API_KEY,
});
const storeId = process.env.SVC_STORE_ID;
let secret = '';
let done;
const finished = new Promise((resolve) => (done = resolve));

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const rawBody = Buffer.concat(chunks); // the exact bytes: never JSON.parse and re-serialise before verifying
    try {
      const event = await constructEvent(rawBody, req.headers, secret);
      res.writeHead(200).end('ok');
      console.log(`verified ${event.event} ${event.id}`);
      done(event);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      console.error(`rejected: ${error.code}: ${error.message}`);
      res.writeHead(400).end(error.code);
    }
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/svc-webhooks`;

const webhook = await svc.webhooks.create({ storeId, name: 'example receiver', url, events: ['order.paid'] });
secret = webhook.secret; // shown once: keep it in your secret store
console.log(`registered ${webhook.id} -> ${url}`);
try {
  await svc.webhooks.test({ storeId, webhookId: webhook.id });
  const timeout = setTimeout(() => done(undefined), 15_000);
  const event = await finished;
  clearTimeout(timeout);
  if (!event) {
    console.error('no test event arrived within 15 s');
    process.exitCode = 1;
  }
} finally {
  await svc.webhooks.delete({ storeId, webhookId: webhook.id });
  server.close();
}
