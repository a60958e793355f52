/**
 * /embed/checkout?store=<id or subdomain>&product=<id>&quantity=<n>, framed by /embed.js:
 * creates the order with POST /api/embed/checkout and goes on to its checkout page in the
 * same frame (embed mode: framable, the token carried in the address).
 */
import { api, h, showProblem } from './common.js';

async function start(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const store = params.get('store');
  const product = params.get('product');
  const quantity = Number(params.get('quantity') ?? '1');
  if (!store || !product || !Number.isInteger(quantity) || quantity < 1) {
    return showProblem('This buy button is missing its store or product.');
  }
  const answer = await api<{ url: string; orderId: string }>('POST', '/api/embed/checkout', {
    shopId: store,
    cart: [{ productId: product, quantity }],
    email: null,
  });
  if (!answer.ok) {
    const retry = h('button', { type: 'button', class: 'secondary' }, 'Try again');
    retry.addEventListener('click', () => location.reload());
    return showProblem(answer.error?.error ?? 'The checkout could not start.', retry);
  }
  const next = new URL(answer.body.url, location.href);
  next.searchParams.set('embed', '1');
  location.replace(next.toString());
}

void start();
