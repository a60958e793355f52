/** Products, their delivery configuration, license-key stock and the public catalog. */
import { z } from 'zod';
import { ZTaxCategory } from './tax.js';
import { decimalPlaces, ZId, ZSingleLine, ZTimestamp, ZCount, ZLivemode } from './common.js';
import { queryInt } from './query.js';
import { ZStorePublic } from './stores.js';
import { twoDecimalsSentence } from './error-map.js';

export const DELIVERY_METHODS = ['licenseKeys', 'downloadFiles', 'manualDelivery', 'deliveryInstructions'] as const;
export const ZDeliveryMethod = z.enum(DELIVERY_METHODS);
export type TDeliveryMethod = z.infer<typeof ZDeliveryMethod>;

export const PRODUCT_STATUSES = ['active', 'draft', 'archived'] as const;
export const ZProductStatus = z.enum(PRODUCT_STATUSES);

/** A price as the API shows it: a JSON number with at most two decimals, exactly (`0.30000000000000004` is not 0.3). */
export const ZAmount = z
  .number()
  .nonnegative()
  .max(1_000_000)
  .refine((value) => decimalPlaces(value) <= 2, { error: (issue) => twoDecimalsSentence(issue.path ?? []) });

/** A product whose minimum quantity is above its maximum. */
export const MIN_ABOVE_MAX = "Minimum quantity can't be above the maximum.";

export const CUSTOM_FIELD_TYPES = ['text', 'number', 'email', 'checkbox'] as const;
export const ZCustomField = z.strictObject({
  name: ZSingleLine(50),
  type: z.enum(CUSTOM_FIELD_TYPES).default('text'),
  required: z.boolean().default(false),
});
export type TCustomField = z.infer<typeof ZCustomField>;

const ZQuantity = z.number().int().min(1).max(10_000);

/** How often a plan bills: every `intervalCount` days, weeks, months or years (at most once a year). */
export const PLAN_INTERVALS = ['day', 'week', 'month', 'year'] as const;
export const ZPlanInterval = z.enum(PLAN_INTERVALS);
export type TPlanInterval = z.infer<typeof ZPlanInterval>;
/** The most plans a recurring product has (archived ones included). */
export const PLANS_MAX = 6;
/** The most seats (a recurring line's quantity) one subscription has. */
export const SEATS_MAX = 100;
/** A plan whose period is longer than a year. */
export const PLAN_OVER_A_YEAR = 'A plan bills at least once a year: a yearly plan has intervalCount 1.';

/**
 * A plan as the seller sends it: with `id` an existing plan of the product (its price, trial and
 * `active` may change; its interval may not), without one a new plan. docs/decisions.md, "Plans".
 */
export const ZPlanInput = z
  .strictObject({
    id: ZId.optional(),
    interval: ZPlanInterval,
    intervalCount: z.number().int().min(1).max(12).default(1),
    price: ZAmount,
    trialDays: z.number().int().min(0).max(365).default(0),
    active: z.boolean().default(true),
  })
  .refine((plan) => plan.interval !== 'year' || plan.intervalCount === 1, {
    message: PLAN_OVER_A_YEAR,
    path: ['intervalCount'],
  });
export type TPlanInput = z.infer<typeof ZPlanInput>;

/** A product's plan as every output shows it; archived plans (`active: false`) stay for what was sold on them. */
export const ZPlan = z.object({
  id: z.string(),
  interval: ZPlanInterval,
  intervalCount: z.number().int().min(1).max(12),
  price: z.number(),
  trialDays: z.number().int().min(0).max(365),
  active: z.boolean(),
});
export type TPlan = z.infer<typeof ZPlan>;

const ZPlans = z.array(ZPlanInput).max(PLANS_MAX).meta({
  description:
    "How the product is billed: `[]` for a one-time product, 1..6 plans for a recurring one (its `price` is then its first active plan's). On update, a plan with `id` changes that plan, one without is added, and a plan left out is archived (`active: false`), never deleted",
});

const productFields = {
  name: ZSingleLine(200),
  price: ZAmount,
  description: z.string().max(20_000).optional(),
  status: ZProductStatus.optional(),
  deliveryMethods: z.array(ZDeliveryMethod).min(1).max(DELIVERY_METHODS.length),
  deliveryInstructions: z.string().max(20_000).optional(),
  customFields: z.array(ZCustomField).max(20).optional(),
  minQuantity: ZQuantity.optional(),
  maxQuantity: ZQuantity.nullable().optional(),
  /** License API: how many instances one license may activate at once (null: unlimited). */
  licenseActivationLimit: z.number().int().min(1).max(10_000).nullable().optional(),
  /** License API: days a license stays valid from its assignment (null: never expires). */
  licenseValidityDays: z.number().int().min(1).max(36_500).nullable().optional(),
  plans: ZPlans.optional(),
  taxCategory: ZTaxCategory.optional().meta({
    description:
      '`standard` (the default) or `ebook`: an e-book takes the reduced rate of a country that has one for e-books',
  }),
};

/** A product's address on the storefront (`/s/<subdomain>/products/<slug>`), unique in its store. */
export const ZProductSlug = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'Use lowercase letters and digits, words joined by single hyphens.');

function productRules<
  T extends z.ZodType<{
    deliveryMethods?: string[];
    customFields?: TCustomField[] | undefined;
    minQuantity?: number | undefined;
    maxQuantity?: number | null | undefined;
    plans?: TPlanInput[] | undefined;
  }>,
>(schema: T) {
  return schema
    .refine((p) => !p.plans || p.plans.length === 0 || p.plans.some((plan) => plan.active), {
      message: 'A recurring product needs an active plan: send `plans: []` to sell it once instead.',
      path: ['plans'],
    })
    .refine(
      (p) => {
        const ids = (p.plans ?? []).flatMap((plan) => (plan.id ? [plan.id] : []));
        return new Set(ids).size === ids.length;
      },
      { message: 'Name each plan once.', path: ['plans'] },
    )
    .refine((p) => !p.deliveryMethods || new Set(p.deliveryMethods).size === p.deliveryMethods.length, {
      message: 'Choose each delivery method once.',
      path: ['deliveryMethods'],
    })
    .refine(
      (p) => !p.customFields || new Set(p.customFields.map((f) => f.name.toLowerCase())).size === p.customFields.length,
      {
        message: 'Give each custom field its own name.',
        path: ['customFields'],
      },
    )
    .refine(
      (p) =>
        p.minQuantity === undefined ||
        p.maxQuantity === undefined ||
        p.maxQuantity === null ||
        p.minQuantity <= p.maxQuantity,
      {
        message: MIN_ABOVE_MAX,
        path: ['minQuantity'],
      },
    );
}

/** A recurring product's price is its first active plan's: a one-time product needs one of its own. */
function priceGiven<T extends z.ZodType<{ price?: number | undefined; plans?: TPlanInput[] | undefined }>>(schema: T) {
  return schema.refine((p) => p.price !== undefined || (p.plans?.length ?? 0) > 0, {
    message: 'Enter a price.',
    path: ['price'],
  });
}

export const ZCreateProductInput = priceGiven(
  productRules(
    // slug: made from the name when not given.
    z.strictObject({ storeId: ZId, ...productFields, price: ZAmount.optional(), slug: ZProductSlug.optional() }),
  ),
);
/** A product's fields with the same rules, without the path's storeId: the dashboard's product form. */
export const ZProductBody = priceGiven(
  productRules(z.strictObject({ ...productFields, price: ZAmount.optional(), slug: ZProductSlug.optional() })),
);
export type TCreateProductInput = z.infer<typeof ZCreateProductInput>;

export const ZUpdateProductInput = productRules(
  z.strictObject({
    storeId: ZId,
    productId: ZId,
    name: productFields.name.optional(),
    slug: ZProductSlug.optional(),
    price: ZAmount.optional(),
    description: productFields.description,
    status: productFields.status,
    deliveryMethods: productFields.deliveryMethods.optional(),
    deliveryInstructions: productFields.deliveryInstructions,
    customFields: productFields.customFields,
    minQuantity: productFields.minQuantity,
    maxQuantity: productFields.maxQuantity,
    licenseActivationLimit: productFields.licenseActivationLimit,
    licenseValidityDays: productFields.licenseValidityDays,
    plans: productFields.plans,
    taxCategory: productFields.taxCategory,
  }),
);
export type TUpdateProductInput = z.infer<typeof ZUpdateProductInput>;

export const ZProductIdInput = z.strictObject({ storeId: ZId, productId: ZId });

/** The most images a product has. */
export const PRODUCT_IMAGES_MAX = 5;
/** The largest image a seller may upload, in bytes. */
export const PRODUCT_IMAGE_MAX_BYTES = 2 * 1024 * 1024;

/** One WebP rendition of a product image, at its own width. */
export const ZProductImageVariant = z.object({ width: ZCount, height: ZCount, url: z.string() });
/**
 * A product image as the storefront shows it: WebP at up to two widths (480 and 960 px, never
 * upscaled), narrowest first; `width`, `height` and `url` are the widest one's.
 */
export const ZProductImage = z.object({
  id: z.string(),
  width: ZCount,
  height: ZCount,
  url: z.string(),
  variants: z.array(ZProductImageVariant),
});
export type TProductImage = z.infer<typeof ZProductImage>;
export const ZProductImageIdInput = z.strictObject({ storeId: ZId, productId: ZId, imageId: ZId });
export const ZReorderProductImagesInput = z.strictObject({
  storeId: ZId,
  productId: ZId,
  /** Every image id of the product, once each, in the new order. */
  imageIds: z.array(ZId).max(PRODUCT_IMAGES_MAX),
});
export const ZProductImageList = z.object({ images: z.array(ZProductImage) });

/** The seller's view. */
export const ZProduct = z.object({
  id: z.string(),
  storeId: z.string(),
  livemode: ZLivemode,
  name: z.string(),
  /** Its storefront address, unique in the store. */
  slug: z.string(),
  description: z.string(),
  price: z.number(),
  currency: z.string(),
  status: ZProductStatus,
  deliveryMethods: z.array(ZDeliveryMethod),
  deliveryInstructions: z.string(),
  customFields: z.array(z.object({ name: z.string(), type: z.enum(CUSTOM_FIELD_TYPES), required: z.boolean() })),
  minQuantity: ZCount,
  maxQuantity: ZCount.nullable(),
  licenseActivationLimit: z.number().int().min(1).max(10_000).nullable(),
  licenseValidityDays: z.number().int().min(1).max(36_500).nullable(),
  /** `[]`: a one-time product. Else its plans in order, archived ones (`active: false`) included; `price` is the first active one's. */
  plans: z.array(ZPlan),
  /** How the product is taxed where the store charges tax (`ebook`: a reduced rate where there is one). */
  taxCategory: ZTaxCategory,
  /** Available license keys, or null when the product is not limited by keys. */
  stock: ZCount.nullable(),
  /** Its images, in the order shown. */
  images: z.array(ZProductImage),
  createdAt: ZTimestamp,
  updatedAt: ZTimestamp,
});
export type TProduct = z.infer<typeof ZProduct>;
export const ZProductList = z.object({ products: z.array(ZProduct) });

/** The buyer's view: no delivery instructions (they are the goods), no status. */
export const ZPublicProduct = ZProduct.pick({
  id: true,
  storeId: true,
  livemode: true,
  name: true,
  slug: true,
  description: true,
  price: true,
  currency: true,
  deliveryMethods: true,
  customFields: true,
  minQuantity: true,
  maxQuantity: true,
  stock: true,
  images: true,
}).extend({
  /** `[]`: a one-time product; else the plans a buyer may choose (active ones only), in order. */
  plans: z.array(ZPlan),
  descriptionHtml: z.string().meta({
    description:
      'The description (Markdown) rendered as HTML safe to put in a page: no raw HTML, links only to http(s), mailto or a path, each `rel="nofollow noopener"`, no images, headings from h3',
  }),
});
export type TPublicProduct = z.infer<typeof ZPublicProduct>;

export const ZSubdomainInput = z.strictObject({ subdomain: z.string().min(1).max(63) });
/** The public catalog of a store: its live products, or with `mode=test` its test products (test mode: docs/architecture.md). */
export const ZStorefrontInput = ZSubdomainInput.extend({
  mode: z.enum(['live', 'test']).optional().meta({
    description:
      "`test`: the store's test products (a theme under development), for the store's seller only: `Authorization: Bearer` with a test key (`sk_test_…`) or a preview token of the store; anyone else gets the live products. Live by default",
  }),
});
export const ZPublicProductList = z.object({ products: z.array(ZPublicProduct) });
export const ZStorefront = z.object({ store: ZStorePublic, products: z.array(ZPublicProduct) });

/** The most keys one dashboard import call takes (a client with more sends several calls). */
export const IMPORT_KEYS_MAX = 20_000;
export const ZImportKeysInput = z.strictObject({
  storeId: ZId,
  productId: ZId,
  keys: z.array(z.string().max(1000)).min(1).max(IMPORT_KEYS_MAX),
});
export const ZImportKeysResult = z.object({ added: ZCount, duplicates: ZCount });

// ---------------------------------------------------------------------------------------------
// The merchant API's products and key stock (/merchant/v1, scopes product:read / product:write)

export const ZListProductsQuery = z.strictObject({
  storeId: ZId,
  status: ZProductStatus.optional(),
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
});
export type TListProductsQuery = z.infer<typeof ZListProductsQuery>;
export const ZProductPage = z.object({
  products: z.array(ZProduct),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});

/** A merchant's key import: 1..10,000 keys of 1..500 characters per call. */
export const ZMerchantImportKeysInput = z.strictObject({
  storeId: ZId,
  productId: ZId,
  keys: z.array(z.string().min(1).max(500)).min(1).max(10_000),
});

/** A key as the merchant API lists it: `disabled` is a key taken back (refund) or whose license the seller disabled. */
export const ZMerchantKeyStatus = z.enum(['available', 'assigned', 'disabled']);
export const ZMerchantKeyListQuery = z.strictObject({
  storeId: ZId,
  productId: ZId,
  status: ZMerchantKeyStatus.optional(),
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
});
export type TMerchantKeyListQuery = z.infer<typeof ZMerchantKeyListQuery>;
export const ZMerchantKey = z.object({
  id: z.string(),
  livemode: ZLivemode,
  /** Eight dots, then the key's last four characters when it has more than eight: never the key, nor its length. */
  masked: z.string(),
  status: ZMerchantKeyStatus,
  /** The order it was sold with (`ORD-<n>`), or null. */
  orderId: z.string().nullable(),
  assignedAt: ZTimestamp.nullable(),
  createdAt: ZTimestamp,
});
export const ZMerchantKeyList = z.object({
  licenseKeys: z.array(ZMerchantKey),
  counts: z.object({ available: ZCount, assigned: ZCount, disabled: ZCount }),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});

export const ZLicenseKeyStatus = z.enum(['available', 'assigned', 'revoked']);
export const ZMaskedLicenseKey = z.object({
  id: z.string(),
  livemode: ZLivemode,
  /** Eight dots, then the key's last four characters when it has more than eight: never the key, nor its length. */
  masked: z.string(),
  status: ZLicenseKeyStatus,
  createdAt: ZTimestamp,
  assignedAt: ZTimestamp.nullable(),
});
export const ZListKeysQuery = z.strictObject({
  storeId: ZId,
  productId: ZId,
  status: ZLicenseKeyStatus.optional(),
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
});
export const ZKeyList = z.object({
  keys: z.array(ZMaskedLicenseKey),
  /** The product's keys by status (all of them, not the page's). */
  counts: z.object({ available: ZCount, assigned: ZCount, revoked: ZCount }),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export const ZKeyIdInput = z.strictObject({ storeId: ZId, productId: ZId, keyId: ZId });

export const ZStoredFile = z.object({
  id: z.string(),
  livemode: ZLivemode,
  productId: z.string().nullable(),
  name: z.string(),
  contentType: z.string(),
  size: ZCount,
  sha256: z.string(),
  createdAt: ZTimestamp,
});
export const ZFileList = z.object({ files: z.array(ZStoredFile) });
export const ZFileIdInput = z.strictObject({ storeId: ZId, productId: ZId, fileId: ZId });
