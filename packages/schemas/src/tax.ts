/** Tax: a store's settings, and what orders, carts and the tax report carry of it. */
import { z } from 'zod';
import { ZPlainText, ZSingleLine } from './common.js';

/** ISO 3166-1 alpha-2 codes of the countries and territories a buyer may name as their billing country. */
export const COUNTRY_CODES = [
  'AD',
  'AE',
  'AF',
  'AG',
  'AI',
  'AL',
  'AM',
  'AO',
  'AQ',
  'AR',
  'AS',
  'AT',
  'AU',
  'AW',
  'AX',
  'AZ',
  'BA',
  'BB',
  'BD',
  'BE',
  'BF',
  'BG',
  'BH',
  'BI',
  'BJ',
  'BL',
  'BM',
  'BN',
  'BO',
  'BQ',
  'BR',
  'BS',
  'BT',
  'BV',
  'BW',
  'BY',
  'BZ',
  'CA',
  'CC',
  'CD',
  'CF',
  'CG',
  'CH',
  'CI',
  'CK',
  'CL',
  'CM',
  'CN',
  'CO',
  'CR',
  'CU',
  'CV',
  'CW',
  'CX',
  'CY',
  'CZ',
  'DE',
  'DJ',
  'DK',
  'DM',
  'DO',
  'DZ',
  'EC',
  'EE',
  'EG',
  'EH',
  'ER',
  'ES',
  'ET',
  'FI',
  'FJ',
  'FK',
  'FM',
  'FO',
  'FR',
  'GA',
  'GB',
  'GD',
  'GE',
  'GF',
  'GG',
  'GH',
  'GI',
  'GL',
  'GM',
  'GN',
  'GP',
  'GQ',
  'GR',
  'GS',
  'GT',
  'GU',
  'GW',
  'GY',
  'HK',
  'HM',
  'HN',
  'HR',
  'HT',
  'HU',
  'ID',
  'IE',
  'IL',
  'IM',
  'IN',
  'IO',
  'IQ',
  'IR',
  'IS',
  'IT',
  'JE',
  'JM',
  'JO',
  'JP',
  'KE',
  'KG',
  'KH',
  'KI',
  'KM',
  'KN',
  'KP',
  'KR',
  'KW',
  'KY',
  'KZ',
  'LA',
  'LB',
  'LC',
  'LI',
  'LK',
  'LR',
  'LS',
  'LT',
  'LU',
  'LV',
  'LY',
  'MA',
  'MC',
  'MD',
  'ME',
  'MF',
  'MG',
  'MH',
  'MK',
  'ML',
  'MM',
  'MN',
  'MO',
  'MP',
  'MQ',
  'MR',
  'MS',
  'MT',
  'MU',
  'MV',
  'MW',
  'MX',
  'MY',
  'MZ',
  'NA',
  'NC',
  'NE',
  'NF',
  'NG',
  'NI',
  'NL',
  'NO',
  'NP',
  'NR',
  'NU',
  'NZ',
  'OM',
  'PA',
  'PE',
  'PF',
  'PG',
  'PH',
  'PK',
  'PL',
  'PM',
  'PN',
  'PR',
  'PS',
  'PT',
  'PW',
  'PY',
  'QA',
  'RE',
  'RO',
  'RS',
  'RU',
  'RW',
  'SA',
  'SB',
  'SC',
  'SD',
  'SE',
  'SG',
  'SH',
  'SI',
  'SJ',
  'SK',
  'SL',
  'SM',
  'SN',
  'SO',
  'SR',
  'SS',
  'ST',
  'SV',
  'SX',
  'SY',
  'SZ',
  'TC',
  'TD',
  'TF',
  'TG',
  'TH',
  'TJ',
  'TK',
  'TL',
  'TM',
  'TN',
  'TO',
  'TR',
  'TT',
  'TV',
  'TW',
  'TZ',
  'UA',
  'UG',
  'UM',
  'US',
  'UY',
  'UZ',
  'VA',
  'VC',
  'VE',
  'VG',
  'VI',
  'VN',
  'VU',
  'WF',
  'WS',
  'YE',
  'YT',
  'ZA',
  'ZM',
  'ZW',
] as const;
const COUNTRY_SET: ReadonlySet<string> = new Set(COUNTRY_CODES);

/** A country code: two capital letters, one ISO 3166-1 assigns. */
export const ZCountryCode = z
  .string()
  .trim()
  .toUpperCase()
  .refine((code) => COUNTRY_SET.has(code), 'Not an ISO 3166-1 country code (such as DE or US).');

export const TAX_BEHAVIORS = ['off', 'exclusive', 'inclusive'] as const;
export const ZTaxBehavior = z.enum(TAX_BEHAVIORS);
export type TTaxBehavior = z.infer<typeof ZTaxBehavior>;

/** How a product is taxed: `ebook` takes the reduced rate of a country that has one for e-books. */
export const TAX_CATEGORIES = ['standard', 'ebook'] as const;
export const ZTaxCategory = z.enum(TAX_CATEGORIES);
export type TTaxCategory = z.infer<typeof ZTaxCategory>;

export const ZTaxRegistration = z
  .string()
  .trim()
  .toUpperCase()
  .refine((code) => code === 'EU' || COUNTRY_SET.has(code), 'An ISO 3166-1 country code, or EU for the one-stop shop.');

/**
 * A store's tax (`settings.tax`): off by default. `exclusive` adds the buyer's country's tax to the
 * price, `inclusive` carves it out of the price; only where the store is registered (`EU`: every EU
 * country, the one-stop shop). The seller's name, address and tax id are printed on every invoice.
 */
export const ZTaxSettings = z.object({
  behavior: ZTaxBehavior,
  /** The country the seller is established in; null until tax is set up. */
  originCountry: z.string().nullable(),
  registrations: z.array(z.string()),
  sellerName: z.string(),
  sellerAddress: z.string(),
  sellerTaxId: z.string(),
});
export type TTaxSettings = z.infer<typeof ZTaxSettings>;

export const TAX_SETTINGS_OFF: TTaxSettings = {
  behavior: 'off',
  originCountry: null,
  registrations: [],
  sellerName: '',
  sellerAddress: '',
  sellerTaxId: '',
};

/** What a store PATCH takes of `settings.tax`: the whole object; once tax is on, the seller's details are required. */
export const ZTaxSettingsInput = z
  .strictObject({
    behavior: ZTaxBehavior,
    originCountry: ZCountryCode.nullable().optional(),
    registrations: z.array(ZTaxRegistration).max(60).optional(),
    sellerName: ZSingleLine(200).optional(),
    sellerAddress: ZPlainText(500).optional(),
    sellerTaxId: ZSingleLine(40).optional(),
  })
  .superRefine((tax, ctx) => {
    if (tax.behavior === 'off') return;
    const required = ['originCountry', 'sellerName', 'sellerAddress', 'sellerTaxId'] as const;
    for (const field of required) {
      if (!tax[field]) ctx.addIssue({ code: 'custom', path: [field], message: 'Required once tax is on.' });
    }
    if (!tax.registrations?.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['registrations'],
        message: 'Name at least one country (or EU) once tax is on.',
      });
    }
  });
export type TTaxSettingsInput = z.infer<typeof ZTaxSettingsInput>;

/** What an order, its events and the API say of its tax (all zero and null while the store's tax is off). */
export const orderTaxFields = {
  subtotal: z.number().meta({
    description:
      "The lines' total before any discount and, when tax is added on top (`exclusive`), before tax: `price` is `subtotal - discount + taxAmount` when exclusive, `subtotal - discount` otherwise",
  }),
  taxAmount: z.number().meta({
    description: 'The tax in `price` (inclusive) or added to it (exclusive), rounded per line; 0 without tax',
  }),
  taxRate: z
    .number()
    .nullable()
    .meta({ description: 'The rate applied, as a fraction (0.19); null when no tax was worked out' }),
  taxCountry: z.string().nullable().meta({
    description: "The buyer's billing country the tax was worked out for; null when the store's tax is off",
  }),
  reverseCharge: z
    .boolean()
    .meta({
      description: 'A B2B sale to a valid EU VAT id of another EU country: no tax charged, the buyer accounts for it',
    }),
  invoiceNumber: z.string().nullable().meta({
    description: '`INV-<year>-<n>`, gapless per store and mode, given when a taxed order is paid; null otherwise',
  }),
  creditNoteNumber: z.string().nullable().meta({
    description: '`CN-<year>-<n>`, given when an invoiced order is refunded; null otherwise',
  }),
};

/** The billing details a buyer may give at checkout (required: `country` once the store's tax is on). */
export const billingInputFields = {
  country: ZCountryCode.optional().meta({
    description: "The buyer's billing country (ISO 3166-1 alpha-2); required when the store charges tax",
  }),
  taxId: z
    .string()
    .trim()
    .min(4)
    .max(20)
    .optional()
    .meta({
      description:
        "The buyer's EU VAT id (`FR40303265045`): a valid one of another EU country makes a reverse-charge sale",
    }),
  billingName: ZSingleLine(200)
    .optional()
    .meta({ description: "The buyer's or the business's name, printed on the invoice" }),
  billingAddress: ZPlainText(500).optional().meta({ description: 'The billing address, printed on the invoice' }),
};

/** The tax report's query: a date range (`from` inclusive, `to` exclusive), as JSON or CSV. */
export const ZTaxReportQuery = z
  .strictObject({
    storeId: z.string().min(1).max(32),
    from: z.iso.datetime({ offset: true }),
    to: z.iso.datetime({ offset: true }),
  })
  .refine((q) => Date.parse(q.from) <= Date.parse(q.to), { message: '`from` is after `to`', path: ['from'] });

export const ZTaxReportRow = z.object({
  country: z.string(),
  /** The rate as a fraction (0.19). */
  rate: z.number(),
  reverseCharge: z.boolean(),
  /** Net amount invoiced less credited, in the store's currency. */
  taxable: z.number(),
  tax: z.number(),
  invoices: z.number().int(),
  creditNotes: z.number().int(),
});
export const ZTaxReport = z.object({
  storeId: z.string(),
  livemode: z.boolean(),
  currency: z.string(),
  from: z.string(),
  to: z.string(),
  rows: z.array(ZTaxReportRow),
  totals: z.object({ taxable: z.number(), tax: z.number() }),
});
export type TTaxReport = z.infer<typeof ZTaxReport>;
