/**
 * index.html, the store page: the store's name, description and active products, each with its
 * price in the store's currency and `Add to cart` (its smallest quantity), or `Sold out`.
 */
import {
  configured,
  errorText,
  h,
  priceText,
  paragraphs,
  productHref,
  productImage,
  shop,
  showStore,
  soldOut,
  type StorefrontProduct,
} from './shop.js';

function productCard(product: StorefrontProduct): HTMLLIElement {
  let action: HTMLElement;
  if (soldOut(product)) {
    action = h('p', { class: 'sold-out' }, 'Sold out');
  } else {
    const button = h(
      'button',
      { type: 'button', class: 'primary' },
      'Add to cart',
      h('span', { class: 'visually-hidden' }, `: ${product.name}`),
    );
    button.addEventListener('click', () => {
      shop.cart.add(product.id, product.minQuantity);
      location.assign('./cart.html');
    });
    action = button;
  }
  return h(
    'li',
    { class: 'product-card' },
    // Cards below the first screen wait until they are scrolled to.
    productImage(product, { sizes: '(min-width: 64rem) 13rem, (min-width: 31rem) 50vw, 100vw', loading: 'lazy' }),
    h('h2', {}, h('a', { href: productHref(product) }, product.name)),
    h('p', { class: 'price' }, priceText(product)),
    action,
  );
}

async function main(): Promise<void> {
  if (!configured()) return;
  const status = document.querySelector<HTMLElement>('.status')!;
  try {
    const { store, products } = await shop.storefront();
    showStore(store);
    document.querySelector('h1')!.textContent = store.name;
    if (store.description)
      document.getElementById('store-description')!.replaceChildren(...paragraphs(store.description));
    const description = document.querySelector<HTMLMetaElement>('meta[name="description"]');
    if (description) description.content = store.description || `${store.name}: products for sale.`;
    // The storefront lists only the store's active products; nothing to filter here.
    document.getElementById('products')!.replaceChildren(...products.map(productCard));
    status.textContent = products.length === 0 ? 'This store has nothing for sale yet.' : '';
  } catch (error) {
    status.textContent = errorText(error);
  }
}

void main();
