/**
 * product.html?slug=<slug> (or ?id=<productId>), a product page: name, price, description, how
 * it is delivered, a recurring product's plan choice, and a quantity with `Add to cart`, or `Sold out`.
 */
import {
  configured,
  errorText,
  h,
  planChoice,
  priceText,
  productImage,
  shop,
  showStore,
  soldOut,
  type StorefrontProduct,
} from './shop.js';

const DELIVERY_LABELS: Record<StorefrontProduct['deliveryMethods'][number], string> = {
  licenseKeys: 'A license key, shown as soon as you have paid',
  downloadFiles: 'Files to download, as soon as you have paid',
  manualDelivery: 'Delivered by the seller after payment',
  deliveryInstructions: 'Instructions from the seller with your order',
};

function addToCartForm(product: StorefrontProduct): HTMLFormElement {
  const quantity = h('input', {
    id: 'quantity',
    name: 'quantity',
    type: 'number',
    inputmode: 'numeric',
    min: String(product.minQuantity),
    max: product.maxQuantity !== null ? String(product.maxQuantity) : undefined,
    value: String(product.minQuantity),
    required: true,
  });
  // A recurring product's active plans (the only ones the store lists), the first chosen.
  const plans =
    product.plans.length > 0
      ? planChoice(product.plans, product.currency, { name: 'planId', legend: 'Plan', chosen: null })
      : null;
  const form = h(
    'form',
    { class: 'add-to-cart' },
    plans,
    h('div', { class: 'field quantity' }, h('label', { for: 'quantity' }, 'Quantity'), quantity),
    h('button', { type: 'submit', class: 'primary' }, 'Add to cart'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    // The browser checked min/max/required already (the form is not novalidate).
    const plan = form.querySelector<HTMLInputElement>('input[name="planId"]:checked')?.value;
    shop.cart.add(product.id, Math.floor(quantity.valueAsNumber), plan);
    location.assign('./cart.html');
  });
  return form;
}

/**
 * The description as svc renders it from the seller's Markdown (`descriptionHtml`): svc lets no raw
 * HTML, script link or image through, so it can go into the page as it is.
 */
/** The text of that HTML, on one line (for the meta description). */
function plainText(html: string): string {
  const box = h('div', {});
  box.innerHTML = html;
  return (box.textContent ?? '').replace(/\s+/g, ' ').trim();
}

function description(html: string): HTMLElement {
  const box = h('div', { class: 'description' });
  box.innerHTML = html;
  return box;
}

function productView(product: StorefrontProduct): Node[] {
  const parts: Array<Node | null> = [
    h('h1', {}, product.name),
    // The page's picture, in view as it opens; a product without one shows none (no box on its own).
    product.images.length > 0
      ? productImage(product, { sizes: '(min-width: 42rem) 40rem, 100vw', loading: 'eager' })
      : null,
    h('p', { class: 'price' }, priceText(product)),
    product.descriptionHtml ? description(product.descriptionHtml) : null,
    h('h2', {}, 'Delivery'),
    h('ul', { class: 'delivery' }, ...product.deliveryMethods.map((method) => h('li', {}, DELIVERY_LABELS[method]))),
    soldOut(product) ? h('p', { class: 'sold-out' }, 'Sold out') : addToCartForm(product),
  ];
  return parts.filter((node): node is Node => node !== null);
}

async function main(): Promise<void> {
  if (!configured()) return;
  const article = document.getElementById('product')!;
  const params = new URLSearchParams(location.search);
  const wanted = params.get('slug') ?? params.get('id');
  try {
    const { store, products } = await shop.storefront();
    // Only active products are listed, so a draft or archived product is not found here.
    const product = products.find((p) => p.slug === wanted || p.id === wanted);
    showStore(store, product ? product.name : 'Product not found');
    document.getElementById('all-products')!.textContent = `All products of ${store.name}`;
    if (!product) {
      article.replaceChildren(h('h1', {}, 'Product not found'), h('p', {}, 'This product is not for sale.'));
      return;
    }
    const meta = document.querySelector<HTMLMetaElement>('meta[name="description"]');
    if (meta) meta.content = plainText(product.descriptionHtml) || `${product.name} at ${store.name}.`;
    article.replaceChildren(...productView(product));
  } catch (error) {
    article.replaceChildren(h('h1', {}, 'Product'), h('p', { role: 'alert' }, errorText(error)));
  }
}

void main();
