// Every order paid since yesterday, across all pages.
//   SVC_API_KEY=sk_... SVC_STORE_ID=... node packages/sdk/examples/list-paid-orders.mjs
// (`node apps/server/dist/main.js seed-demo` prints a key and the store id.)
import { createMerchantClient, isSvcError } from '@svc/sdk';

const svc = createMerchantClient({
  baseUrl: process.env.SVC_BASE_URL ?? 'http://localhost:3000',
  apiKey: process.env.SVC_API_KEY,
});
const storeId = process.env.SVC_STORE_ID;
const since = new Date(Date.now() - 24 * 3600_000).toISOString();

try {
  let count = 0;
  let total = 0;
  for await (const order of svc.orders.iterate({ storeId, status: 'completed', from: since })) {
    count += 1;
    total += order.paid;
    console.log(`${order.orderId}  ${order.customerEmail}  ${order.paid.toFixed(2)}  ${order.productName}`);
  }
  console.log(`${count} paid orders since ${since}, ${total.toFixed(2)} in all`);
} catch (error) {
  if (!isSvcError(error)) throw error;
  console.error(`${error.name} ${error.status ?? ''} ${error.code}: ${error.message}`);
  process.exitCode = 1;
}
