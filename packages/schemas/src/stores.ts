/** Store schemas shown to the public and to sellers. */
import { z } from 'zod';
import { ZTaxSettings, ZTaxSettingsInput } from './tax.js';
import { ZEmail, ZId, ZPlainText, ZSingleLine, ZTimestamp } from './common.js';

/** Subdomain rule: lowercase letters, digits and hyphens, 3-63 chars, no leading/trailing hyphen. */
export const ZSubdomain = z
  .string()
  .min(3)
  .max(63)
  .regex(
    /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/,
    'Use lowercase letters, digits and hyphens only, not starting or ending with a hyphen.',
  );

/**
 * The ISO 4217 codes of money in circulation (the list as of 2025: XCG replaced ANG, ZWG ZWL, SLE
 * SLL), without the codes for precious metals, funds units and testing (XAU, XDR, XTS, XXX ...).
 */
// prettier-ignore
export const ISO_4217_CURRENCIES = [
  'AED', 'AFN', 'ALL', 'AMD', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN', 'BHD',
  'BIF', 'BMD', 'BND', 'BOB', 'BRL', 'BSD', 'BTN', 'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHF', 'CLP',
  'CNY', 'COP', 'CRC', 'CUP', 'CVE', 'CZK', 'DJF', 'DKK', 'DOP', 'DZD', 'EGP', 'ERN', 'ETB', 'EUR',
  'FJD', 'FKP', 'GBP', 'GEL', 'GHS', 'GIP', 'GMD', 'GNF', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF',
  'IDR', 'ILS', 'INR', 'IQD', 'IRR', 'ISK', 'JMD', 'JOD', 'JPY', 'KES', 'KGS', 'KHR', 'KMF', 'KPW',
  'KRW', 'KWD', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'LYD', 'MAD', 'MDL', 'MGA', 'MKD',
  'MMK', 'MNT', 'MOP', 'MRU', 'MUR', 'MVR', 'MWK', 'MXN', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK',
  'NPR', 'NZD', 'OMR', 'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'PYG', 'QAR', 'RON', 'RSD', 'RUB',
  'RWF', 'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS', 'SRD', 'SSP', 'STN', 'SVC',
  'SYP', 'SZL', 'THB', 'TJS', 'TMT', 'TND', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS', 'UAH', 'UGX', 'USD',
  'UYU', 'UZS', 'VES', 'VND', 'VUV', 'WST', 'XAF', 'XCD', 'XCG', 'XOF', 'XPF', 'YER', 'ZAR', 'ZMW',
  'ZWG',
] as const;

/** A store's currency: an ISO 4217 code of money in circulation, in capitals. */
export const ZCurrency = z.enum(ISO_4217_CURRENCIES, {
  error: (issue) =>
    typeof issue.input === 'string' && issue.input !== ''
      ? `${issue.input.slice(0, 10)} is not a currency: use an ISO 4217 code such as USD or EUR.`
      : 'Enter a currency: an ISO 4217 code such as USD or EUR.',
});

/** The longest store `description` (plain text). */
export const STORE_DESCRIPTION_MAX = 2000;

/** A store's accent colour on its storefront: `#rrggbb`. */
export const ZAccentColor = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'Enter a colour as #rrggbb, such as #1a73e8.')
  .transform((color) => color.toLowerCase());

export const ZStoreLookupInput = z.strictObject({
  subdomain: z.string().min(1).max(63),
});
export type TStoreLookupInput = z.infer<typeof ZStoreLookupInput>;

/** What anyone may see of a store: no owner, no settings, no ban reason. */
export const ZStorePublic = z.object({
  id: z.string(),
  name: z.string(),
  subdomain: z.string(),
  currency: z.string(),
  /** Plain text the storefront shows under the store's name; empty for none. */
  description: z.string(),
  /** `#rrggbb`, or null for the default. */
  accentColor: z.string().nullable(),
  /** The logo (PNG, JPEG or WebP) on this service, as a path (`/s/<subdomain>/logo/<id>`); null for none. */
  logoUrl: z.string().nullable(),
  createdAt: ZTimestamp,
});
export type TStorePublic = z.infer<typeof ZStorePublic>;

export const STORE_PERMISSIONS = ['viewOrders', 'editOrders', 'manageProducts', 'manageSettings'] as const;
export const ZStorePermission = z.enum(STORE_PERMISSIONS);
export type TStorePermission = z.infer<typeof ZStorePermission>;

export const ZStoreRole = z.enum(['owner', 'staff']);

/** An origin a theme may call the customer routes from: scheme, host and optional port. */
export const ZOrigin = z
  .string()
  .max(200)
  .regex(/^https?:\/\/[a-z0-9.-]+(?::\d{1,5})?$/, 'an origin such as https://shop.example.com');

/** Payment methods a store can offer (`test` works only outside production). */
export const PAYMENT_METHODS = ['manual', 'stripe', 'test'] as const;
export const ZPaymentMethod = z.enum(PAYMENT_METHODS);
export type TPaymentMethod = z.infer<typeof ZPaymentMethod>;

/** The longest `receiptNote` a store may set. */
export const RECEIPT_NOTE_MAX = 1000;

/** Days a subscription's licenses stay valid after a failed renewal (`past_due`), at most. */
export const SUBSCRIPTION_GRACE_DAYS_MAX = 30;
const ZSubscriptionGraceDays = z.number().int().min(0).max(SUBSCRIPTION_GRACE_DAYS_MAX);
/** The longest an offline license lease may last, in days (a lease's `exp` is never later). */
export const LICENSE_LEASE_DAYS_MAX = 90;
const ZLicenseLeaseDays = z.number().int().min(1).max(LICENSE_LEASE_DAYS_MAX);

export const ZStoreSettings = z.object({
  paymentMethods: z.array(ZPaymentMethod).min(1).max(PAYMENT_METHODS.length),
  /** Shown to buyers who choose manual payment (bank transfer details, etc.). */
  manualPaymentInstructions: z.string().max(5000),
  /** Whether a buyer may open an order's delivery with its e-mail address alone (besides the token). */
  emailOrderAccess: z.boolean(),
  /** Whether the buyer is e-mailed a receipt with the order's link when an order is paid. */
  receiptsEnabled: z.boolean(),
  /** Plain text the receipt ends with (support address, thanks...); empty for none. */
  receiptNote: z.string().max(RECEIPT_NOTE_MAX),
  /** Days a subscription's licenses stay valid after its renewal failed (0 to 30; 7 by default). */
  subscriptionGraceDays: ZSubscriptionGraceDays,
  /** Days an offline license lease lasts at most (1 to 90; 7 by default): how long the merchant's software runs without calling home. */
  licenseLeaseDays: ZLicenseLeaseDays,
  /** Tax (off by default): how prices carry it, where the store is registered, and the seller on its invoices. */
  tax: ZTaxSettings,
});
export type TStoreSettings = z.infer<typeof ZStoreSettings>;

export const ZStore = z.object({
  id: z.string(),
  name: z.string(),
  subdomain: z.string(),
  currency: z.string(),
  banned: z.boolean(),
  description: z.string(),
  accentColor: z.string().nullable(),
  logoUrl: z.string().nullable(),
  allowedOrigins: z.array(z.string()),
  role: ZStoreRole,
  permissions: z.array(ZStorePermission),
  settings: ZStoreSettings,
  /** The owner requires two-factor sign-in of every member (`two_factor_enrolment_required` otherwise). */
  requireTwoFactor: z.boolean(),
  createdAt: ZTimestamp,
  updatedAt: ZTimestamp,
});
export type TStore = z.infer<typeof ZStore>;

export const ZCreateStoreInput = z.strictObject({
  name: ZSingleLine(100),
  subdomain: ZSubdomain,
  currency: ZCurrency.optional(),
});

export const ZStoreIdInput = z.strictObject({ storeId: ZId });

/** A preview token of a store's test mode (stores.previewToken): what lets a browser see and buy its test products. */
export const ZStorePreview = z.object({
  token: z.string().meta({
    description:
      '`svc_preview_…`: send it as `Authorization: Bearer` on the theme API (catalog with `mode=test`, cart, checkout), or open the storefront with `?mode=test&preview=<token>`. It opens nothing else.',
  }),
  expiresAt: ZTimestamp,
  url: z.string().meta({ description: "The storefront's test mode with this token: the dashboard's View store link" }),
});
export type TStorePreview = z.infer<typeof ZStorePreview>;

/**
 * The steps of a new store's setup, in the order the dashboard's Home lists them
 * (stores.onboarding; docs/decisions.md, "Onboarding checklist").
 */
export const ONBOARDING_STEPS = ['add_product', 'payment_methods', 'view_store', 'test_purchase', 'api_key'] as const;
export const ZOnboardingStepId = z.enum(ONBOARDING_STEPS);
export type TOnboardingStepId = z.infer<typeof ZOnboardingStepId>;

/** Which setup steps a store has done; `complete` when all of them are. */
export const ZStoreOnboarding = z.object({
  steps: z.array(
    z.object({
      id: ZOnboardingStepId,
      done: z.boolean(),
    }),
  ),
  complete: z.boolean(),
});
export type TStoreOnboarding = z.infer<typeof ZStoreOnboarding>;

export const ZUpdateStoreInput = z.strictObject({
  storeId: ZId,
  name: ZSingleLine(100).optional(),
  currency: ZCurrency.optional(),
  /** Plain text shown on the storefront (no markup is read: it is escaped). */
  description: ZPlainText(STORE_DESCRIPTION_MAX).optional(),
  /** `#rrggbb`; null goes back to the default. */
  accentColor: ZAccentColor.nullable().optional(),
  allowedOrigins: z.array(ZOrigin).max(20).optional(),
  settings: z
    .strictObject({
      paymentMethods: z.array(ZPaymentMethod).min(1).max(PAYMENT_METHODS.length).optional(),
      manualPaymentInstructions: z.string().max(5000).optional(),
      emailOrderAccess: z.boolean().optional(),
      receiptsEnabled: z.boolean().optional(),
      receiptNote: ZPlainText(RECEIPT_NOTE_MAX).optional(),
      subscriptionGraceDays: ZSubscriptionGraceDays.optional(),
      licenseLeaseDays: ZLicenseLeaseDays.optional(),
      tax: ZTaxSettingsInput.optional(),
    })
    .optional(),
});

export const ZStoreList = z.object({ stores: z.array(ZStore) });

/**
 * The store as a merchant API key reads it: the dashboard's view without what belongs to a
 * signed-in member (`role`, `permissions`) or to the operator (`banned`). The owner's two-factor
 * rule is shown (read only): it binds people, not keys.
 */
export const ZMerchantStore = ZStore.omit({ role: true, permissions: true, banned: true });
export type TMerchantStore = z.infer<typeof ZMerchantStore>;

/**
 * What a merchant API key may change of the store: its name, its look (docs/architecture.md, The
 * faces), its tax and its offline lease days.
 */
export const ZMerchantUpdateStoreInput = ZUpdateStoreInput.pick({
  storeId: true,
  name: true,
  description: true,
  accentColor: true,
}).extend({
  settings: z
    .strictObject({ tax: ZTaxSettingsInput.optional(), licenseLeaseDays: ZLicenseLeaseDays.optional() })
    .optional(),
});
export type TMerchantUpdateStoreInput = z.infer<typeof ZMerchantUpdateStoreInput>;

export const ZMember = z.object({
  id: z.string(),
  storeId: z.string(),
  userId: z.string(),
  email: z.string(),
  /** The member's display name, or null. */
  name: z.string().nullable(),
  role: ZStoreRole,
  permissions: z.array(ZStorePermission),
  createdAt: ZTimestamp,
});
export type TMember = z.infer<typeof ZMember>;

const ZPermissions = z.array(ZStorePermission).max(STORE_PERMISSIONS.length);

export const ZAddMemberInput = z.strictObject({ storeId: ZId, email: ZEmail, permissions: ZPermissions });
export const ZUpdateMemberInput = z.strictObject({ storeId: ZId, memberId: ZId, permissions: ZPermissions });
export const ZMemberIdInput = z.strictObject({ storeId: ZId, memberId: ZId });
/** The owner's two-factor policy: on, every member needs two-factor sign-in to reach the store. */
export const ZSetRequireTwoFactorInput = z.strictObject({ storeId: ZId, requireTwoFactor: z.boolean() });

export const ZMemberList = z.object({ members: z.array(ZMember) });
