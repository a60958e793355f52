// Three pages, three HTML entry points: Vite builds each with its own script into dist/.
// `base: './'` makes every address in dist/ relative, so the files work from any folder of any host.
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

export default defineConfig({
  base: './',
  build: {
    rollupOptions: {
      input: {
        store: resolve(import.meta.dirname, 'index.html'),
        product: resolve(import.meta.dirname, 'product.html'),
        cart: resolve(import.meta.dirname, 'cart.html'),
      },
    },
  },
});
