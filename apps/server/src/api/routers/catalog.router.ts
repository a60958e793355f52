/**
 * The catalogue: products, their images, files and key stock, for merchants under /merchant/v1
 * (Bearer key with product scopes, capped by manageProducts) and the dashboard (session; reads
 * need membership, writes manageProducts), each operation both call declared once
 * (storeResource); and the public storefront reads.
 */
import {
  ZCreateProductInput,
  ZFileIdInput,
  ZFileList,
  ZImportKeysInput,
  ZImportKeysResult,
  ZKeyIdInput,
  ZKeyList,
  ZListKeysQuery,
  ZListProductsQuery,
  ZMerchantImportKeysInput,
  ZMerchantKeyList,
  ZMerchantKeyListQuery,
  ZProduct,
  ZProductImageIdInput,
  ZProductImageList,
  ZProductPage,
  ZProductIdInput,
  ZProductList,
  ZPublicProductList,
  ZReorderProductImagesInput,
  ZStoreIdInput,
  ZStorefront,
  ZStorefrontInput,
  ZUpdateProductInput,
} from '@svc/schemas';
import { z } from 'zod';
import { merchantProcedure, publicProcedure, router, storeProcedure, storeResource } from '../../trpc/procedures.js';
import {
  createProduct,
  deleteProduct,
  getProduct,
  listProductPage,
  listProducts,
  storefront,
  storeProducts,
  updateProduct,
} from '../../modules/catalog/catalog.service.js';
import { testModeAccess } from '../../modules/access/test-mode.js';
import { deleteProductFile, listProductFiles } from '../../modules/catalog/files.service.js';
import { deleteProductImage, reorderProductImages } from '../../modules/catalog/images.service.js';
import { deleteKey, listKeys, listMerchantKeys } from '../../modules/catalog/key-store.js';
import { restock } from '../../flows/restock.js';

const publicTags = ['public'];
const MERCHANT = '/merchant/v1/stores/{storeId}/products';
const DASHBOARD = '/dashboard/stores/{storeId}/products';
const tags = ['merchant: products'];
const dashboard = { tags: ['dashboard: products'] };
const one = `${MERCHANT}/{productId}` as const;

/** Reading a product needs membership alone on the dashboard; a key needs product:read. */
const read = storeResource({ scope: 'product:read' });
const write = storeResource({ scope: 'product:write', permission: 'manageProducts' });
const merchantRead = merchantProcedure('product:read');
const member = storeProcedure();
const manage = storeProcedure('manageProducts');

export const catalogRouter = router({
  create: write
    .meta({
      openapi: { method: 'POST', path: MERCHANT, tags, summary: 'Create a product' },
      dashboard,
      successStatus: 201,
      errors: [],
    })
    .input(ZCreateProductInput)
    .output(ZProduct)
    .mutation(({ ctx, input }) => createProduct(ctx, input)),
  get: read
    .meta({
      openapi: { method: 'GET', path: one, tags, summary: 'One product, with its stock (available keys, or null)' },
      dashboard,
      errors: ['not_found'],
    })
    .input(ZProductIdInput)
    .output(ZProduct)
    .query(({ ctx, input }) => getProduct(ctx, input)),
  update: write
    .meta({
      openapi: { method: 'PATCH', path: one, tags, summary: 'Change a product' },
      dashboard,
      errors: ['not_found'],
    })
    .input(ZUpdateProductInput)
    .output(ZProduct)
    .mutation(({ ctx, input }) => updateProduct(ctx, input)),
  delete: write
    .meta({
      openapi: { method: 'DELETE', path: one, tags, summary: 'Archive a product (orders keep naming it)' },
      dashboard,
      successStatus: 204,
      errors: ['not_found'],
    })
    .input(ZProductIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteProduct(ctx, input)),
  // Adding an image is a multipart plain route (http/uploads.ts); these two take JSON.
  deleteImage: write
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${one}/images/{imageId}`,
        tags,
        summary: "Remove one of a product's images",
      },
      dashboard,
      successStatus: 204,
      errors: ['not_found'],
    })
    .input(ZProductImageIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteProductImage(ctx, input)),
  reorderImages: write
    .meta({
      openapi: {
        method: 'PUT',
        path: `${one}/images/order`,
        tags,
        summary: "Put a product's images in a new order (every image id once)",
      },
      dashboard,
      errors: ['not_found'],
    })
    .input(ZReorderProductImagesInput)
    .output(ZProductImageList)
    .mutation(({ ctx, input }) => reorderProductImages(ctx, input)),

  // The lists and the key stock differ on purpose (docs/decisions.md): a keyset page and the
  // `licenseKeys` shape for merchants, the whole catalogue and the `keys` shape for the dashboard.
  list: merchantRead
    .meta({
      openapi: {
        method: 'GET',
        path: MERCHANT,
        tags,
        summary: "The store's products, newest first, with their stock (filter `status`)",
      },
      errors: [],
    })
    .input(ZListProductsQuery)
    .output(ZProductPage)
    .query(({ ctx, input }) => listProductPage(ctx, input)),
  keys: merchantRead
    .meta({
      openapi: {
        method: 'GET',
        path: `${one}/license-keys`,
        tags,
        summary: "A product's license keys, masked, with the stock counts (never the key)",
      },
      errors: ['not_found'],
    })
    .input(ZMerchantKeyListQuery)
    .output(ZMerchantKeyList)
    .query(({ ctx, input }) => listMerchantKeys(ctx, input)),

  dashboardList: member
    .meta({
      openapi: {
        method: 'GET',
        path: DASHBOARD,
        tags: dashboard.tags,
        summary: "The store's products with their stock",
      },
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZProductList)
    .query(async ({ ctx, input }) => ({ products: await listProducts(ctx, input) })),

  dashboardKeys: manage
    .meta({
      openapi: {
        method: 'GET',
        path: `${DASHBOARD}/{productId}/license-keys`,
        tags: dashboard.tags,
        summary: 'License keys, masked',
      },
      errors: ['not_found'],
    })
    .input(ZListKeysQuery)
    .output(ZKeyList)
    .query(({ ctx, input }) => listKeys(ctx, input)),

  /**
   * Adding keys to stock also serves the orders that waited for them (restock). The merchant's
   * import takes 1 to 10,000 keys of 1 to 500 characters, the dashboard's up to 20,000 of 1,000.
   */
  importKeys: merchantProcedure('product:write')
    .meta({
      openapi: {
        method: 'POST',
        path: `${one}/license-keys`,
        tags,
        summary: 'Add 1 to 10,000 license keys to stock (duplicates dropped); orders waiting for keys are filled',
      },
      errors: ['not_found', 'conflict'],
    })
    .input(ZMerchantImportKeysInput)
    .output(ZImportKeysResult)
    .mutation(({ ctx, input }) => restock(ctx, input)),
  dashboardImportKeys: manage
    .meta({
      openapi: {
        method: 'POST',
        path: `${DASHBOARD}/{productId}/license-keys`,
        tags: dashboard.tags,
        summary: 'Add license keys to stock (duplicates dropped)',
      },
      errors: ['not_found'],
    })
    .input(ZImportKeysInput)
    .output(ZImportKeysResult)
    .mutation(({ ctx, input }) => restock(ctx, input)),

  deleteKey: manage
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${DASHBOARD}/{productId}/license-keys/{keyId}`,
        tags: dashboard.tags,
        summary: 'Delete an unsold key',
      },
      successStatus: 204,
      errors: ['not_found', 'conflict'],
    })
    .input(ZKeyIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteKey(ctx, input)),

  files: member
    .meta({
      openapi: {
        method: 'GET',
        path: `${DASHBOARD}/{productId}/files`,
        tags: dashboard.tags,
        summary: "A product's downloadable files",
      },
      errors: ['not_found'],
    })
    .input(ZProductIdInput)
    .output(ZFileList)
    .query(async ({ ctx, input }) => ({ files: await listProductFiles(ctx, input) })),

  deleteFile: manage
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${DASHBOARD}/{productId}/files/{fileId}`,
        tags: dashboard.tags,
        summary: 'Delete a file',
      },
      successStatus: 204,
      errors: ['not_found'],
    })
    .input(ZFileIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteProductFile(ctx, input)),

  storefront: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/stores/by-subdomain/{subdomain}/storefront',
        tags: publicTags,
        summary: 'A store and its active products',
      },
      // unauthorized: a credential (test key, preview token) that does not open the store's test mode.
      errors: ['not_found', 'store_banned', 'unauthorized'],
    })
    .input(ZStorefrontInput)
    .output(ZStorefront)
    .query(({ ctx, input }) => storefront(ctx, input, testModeAccess(ctx))),

  products: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/stores/by-subdomain/{subdomain}/products',
        tags: publicTags,
        summary: "A store's active products",
      },
      errors: ['not_found', 'store_banned', 'unauthorized'],
    })
    .input(ZStorefrontInput)
    .output(ZPublicProductList)
    .query(({ ctx, input }) => storeProducts(ctx, input, testModeAccess(ctx))),
});
