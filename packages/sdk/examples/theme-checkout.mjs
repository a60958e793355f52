// What a theme does: read the storefront, put a product in the cart, check out, and send the
// buyer to the hosted checkout page.
//   SVC_SUBDOMAIN=demo node packages/sdk/examples/theme-checkout.mjs
import { createThemeClient, SvcApiError } from '@svc/sdk';

const baseUrl = process.env.SVC_BASE_URL ?? 'http://localhost:3000';
const subdomain = process.env.SVC_SUBDOMAIN ?? 'demo';

// Given the subdomain alone, the client looks the store id up once for the calls that need it.
const shop = createThemeClient({ baseUrl, subdomain });
const { store, products } = await shop.storefront();
console.log(`${store.name}: ${products.length} products`);

const product = products[0];
const cart = await shop.cart.get([{ productId: product.id, quantity: 1 }]);
console.log(`cart: ${cart.itemCount} item(s), subtotal ${cart.subtotal.toFixed(2)} ${cart.currency}`);

const coupon = await shop.coupons.validate({ code: process.env.SVC_COUPON ?? 'DEMO10', cart: cart.lines });
try {
  const { url, orderId } = await shop.checkout({
    cart: cart.lines,
    email: process.env.SVC_EMAIL ?? 'buyer@example.com',
    ...(coupon.valid ? { coupon: coupon.code } : {}),
  });
  console.log(`order ${orderId}: send the buyer to ${url}`);
} catch (error) {
  if (!(error instanceof SvcApiError)) throw error;
  // Field-level problems (a missing custom field, say) arrive as issues.
  console.error(error.code, error.message, error.issues);
  process.exitCode = 1;
}
