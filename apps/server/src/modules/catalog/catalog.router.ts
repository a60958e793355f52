import {
  ZCreateProductInput,
  ZFileIdInput,
  ZFileList,
  ZKeyIdInput,
  ZKeyList,
  ZListKeysQuery,
  ZProduct,
  ZProductIdInput,
  ZProductList,
  ZPublicProductList,
  ZStoreIdInput,
  ZStorefront,
  ZSubdomainInput,
  ZUpdateProductInput,
} from '@svc/schemas';
import { z } from 'zod';
import { publicProcedure, router, storeProcedure } from '../../trpc/procedures.js';
import {
  createProduct,
  deleteKey,
  deleteProduct,
  findSellingStore,
  getProduct,
  listKeys,
  listProducts,
  publicProducts,
  storefront,
  updateProduct,
} from './catalog.service.js';
import { deleteProductFile, listProductFiles } from './files.service.js';

export const PRODUCT_TAGS = ['dashboard: products'];
const dashboard = PRODUCT_TAGS;
const publicTags = ['public'];
export const PRODUCTS_BASE = '/dashboard/stores/{storeId}/products';
const base = PRODUCTS_BASE;

export const catalogRouter = router({
  create: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'POST', path: base, tags: dashboard, summary: 'Create a product' }, successStatus: 201, errors: [] })
    .input(ZCreateProductInput)
    .output(ZProduct)
    .mutation(({ ctx, input }) => createProduct(ctx, input)),

  list: storeProcedure()
    .meta({ openapi: { method: 'GET', path: base, tags: dashboard, summary: "The store's products with their stock" }, errors: [] })
    .input(ZStoreIdInput)
    .output(ZProductList)
    .query(async ({ ctx, input }) => ({ products: await listProducts(ctx, input) })),

  get: storeProcedure()
    .meta({ openapi: { method: 'GET', path: `${base}/{productId}`, tags: dashboard, summary: 'One product' }, errors: ['not_found'] })
    .input(ZProductIdInput)
    .output(ZProduct)
    .query(({ ctx, input }) => getProduct(ctx, input)),

  update: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'PATCH', path: `${base}/{productId}`, tags: dashboard, summary: 'Change a product' }, errors: ['not_found'] })
    .input(ZUpdateProductInput)
    .output(ZProduct)
    .mutation(({ ctx, input }) => updateProduct(ctx, input)),

  delete: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'DELETE', path: `${base}/{productId}`, tags: dashboard, summary: 'Delete a product (orders keep naming it)' }, successStatus: 204, errors: ['not_found'] })
    .input(ZProductIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteProduct(ctx, input)),

  keys: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'GET', path: `${base}/{productId}/license-keys`, tags: dashboard, summary: 'License keys, masked' }, errors: ['not_found'] })
    .input(ZListKeysQuery)
    .output(ZKeyList)
    .query(({ ctx, input }) => listKeys(ctx, input)),

  deleteKey: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'DELETE', path: `${base}/{productId}/license-keys/{keyId}`, tags: dashboard, summary: 'Delete an unsold key' }, successStatus: 204, errors: ['not_found', 'conflict'] })
    .input(ZKeyIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteKey(ctx, input)),

  files: storeProcedure()
    .meta({ openapi: { method: 'GET', path: `${base}/{productId}/files`, tags: dashboard, summary: "A product's downloadable files" }, errors: ['not_found'] })
    .input(ZProductIdInput)
    .output(ZFileList)
    .query(async ({ ctx, input }) => ({ files: await listProductFiles(ctx, input) })),

  deleteFile: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'DELETE', path: `${base}/{productId}/files/{fileId}`, tags: dashboard, summary: 'Delete a file' }, successStatus: 204, errors: ['not_found'] })
    .input(ZFileIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteProductFile(ctx, input)),

  storefront: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/stores/by-subdomain/{subdomain}/storefront', tags: publicTags, summary: 'A store and its active products' }, errors: ['not_found', 'store_banned'] })
    .input(ZSubdomainInput)
    .output(ZStorefront)
    .query(({ ctx, input }) => storefront(ctx, input.subdomain)),

  products: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/stores/by-subdomain/{subdomain}/products', tags: publicTags, summary: "A store's active products" }, errors: ['not_found', 'store_banned'] })
    .input(ZSubdomainInput)
    .output(ZPublicProductList)
    .query(async ({ ctx, input }) => ({ products: await publicProducts(ctx, await findSellingStore(ctx.em, input.subdomain, 'subdomain')) })),
});
