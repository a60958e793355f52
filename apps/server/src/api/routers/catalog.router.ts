import {
  ZCreateProductInput,
  ZFileIdInput,
  ZFileList,
  ZKeyIdInput,
  ZKeyList,
  ZListKeysQuery,
  ZListProductsQuery,
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
import {
  merchantProcedure,
  publicProcedure,
  router,
  storeProcedure,
  type ResourceSurface,
} from '../../trpc/procedures.js';
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

export const PRODUCT_TAGS = ['dashboard: products'];
const dashboard = PRODUCT_TAGS;
const publicTags = ['public'];
export const PRODUCTS_BASE = '/dashboard/stores/{storeId}/products';
export const MERCHANT_PRODUCTS_BASE = '/merchant/v1/stores/{storeId}/products';
export const MERCHANT_PRODUCT_TAGS = ['merchant: products'];
const base = PRODUCTS_BASE;

/** create, get, update and delete (archive), the same on both surfaces. */
function productRoutes({ read, write, base, tags }: ResourceSurface) {
  const one = `${base}/{productId}` as const;
  return {
    create: write
      .meta({
        openapi: { method: 'POST', path: base, tags, summary: 'Create a product' },
        successStatus: 201,
        errors: [],
      })
      .input(ZCreateProductInput)
      .output(ZProduct)
      .mutation(({ ctx, input }) => createProduct(ctx, input)),
    get: read
      .meta({
        openapi: { method: 'GET', path: one, tags, summary: 'One product, with its stock (available keys, or null)' },
        errors: ['not_found'],
      })
      .input(ZProductIdInput)
      .output(ZProduct)
      .query(({ ctx, input }) => getProduct(ctx, input)),
    update: write
      .meta({ openapi: { method: 'PATCH', path: one, tags, summary: 'Change a product' }, errors: ['not_found'] })
      .input(ZUpdateProductInput)
      .output(ZProduct)
      .mutation(({ ctx, input }) => updateProduct(ctx, input)),
    delete: write
      .meta({
        openapi: { method: 'DELETE', path: one, tags, summary: 'Archive a product (orders keep naming it)' },
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
        errors: ['not_found'],
      })
      .input(ZReorderProductImagesInput)
      .output(ZProductImageList)
      .mutation(({ ctx, input }) => reorderProductImages(ctx, input)),
  };
}

const manage = storeProcedure('manageProducts');
const member = storeProcedure();
const dashboardProducts = productRoutes({ read: member, write: manage, base, tags: dashboard });
const merchantRead = merchantProcedure('product:read');
const merchantProducts = productRoutes({
  read: merchantRead,
  write: merchantProcedure('product:write'),
  base: MERCHANT_PRODUCTS_BASE,
  tags: MERCHANT_PRODUCT_TAGS,
});

export const catalogRouter = router({
  ...merchantProducts,
  list: merchantRead
    .meta({
      openapi: {
        method: 'GET',
        path: MERCHANT_PRODUCTS_BASE,
        tags: MERCHANT_PRODUCT_TAGS,
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
        path: `${MERCHANT_PRODUCTS_BASE}/{productId}/license-keys`,
        tags: MERCHANT_PRODUCT_TAGS,
        summary: "A product's license keys, masked, with the stock counts (never the key)",
      },
      errors: ['not_found'],
    })
    .input(ZMerchantKeyListQuery)
    .output(ZMerchantKeyList)
    .query(({ ctx, input }) => listMerchantKeys(ctx, input)),

  dashboardCreate: dashboardProducts.create,
  dashboardGet: dashboardProducts.get,
  dashboardUpdate: dashboardProducts.update,
  dashboardDelete: dashboardProducts.delete,
  dashboardDeleteImage: dashboardProducts.deleteImage,
  dashboardReorderImages: dashboardProducts.reorderImages,
  dashboardList: member
    .meta({
      openapi: { method: 'GET', path: base, tags: dashboard, summary: "The store's products with their stock" },
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZProductList)
    .query(async ({ ctx, input }) => ({ products: await listProducts(ctx, input) })),

  dashboardKeys: manage
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/{productId}/license-keys`,
        tags: dashboard,
        summary: 'License keys, masked',
      },
      errors: ['not_found'],
    })
    .input(ZListKeysQuery)
    .output(ZKeyList)
    .query(({ ctx, input }) => listKeys(ctx, input)),

  deleteKey: manage
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${base}/{productId}/license-keys/{keyId}`,
        tags: dashboard,
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
        path: `${base}/{productId}/files`,
        tags: dashboard,
        summary: "A product's downloadable files",
      },
      errors: ['not_found'],
    })
    .input(ZProductIdInput)
    .output(ZFileList)
    .query(async ({ ctx, input }) => ({ files: await listProductFiles(ctx, input) })),

  deleteFile: storeProcedure('manageProducts')
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${base}/{productId}/files/{fileId}`,
        tags: dashboard,
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
