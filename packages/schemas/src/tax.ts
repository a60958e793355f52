/** Tax: a store's settings, and what orders, carts and the tax report carry of it. */
import { z } from 'zod';
import { ZCount, ZPlainText, ZSingleLine } from './common.js';

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
  reverseCharge: z.boolean().meta({
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
  taxId: z.string().trim().min(4).max(20).optional().meta({
    description:
      "The buyer's EU VAT id (`FR40303265045`): a valid one of another EU country makes a reverse-charge sale",
  }),
  billingName: ZSingleLine(200)
    .optional()
    .meta({ description: "The buyer's or the business's name, printed on the invoice" }),
  billingAddress: ZPlainText(500).optional().meta({ description: 'The billing address, printed on the invoice' }),
};

/** The longest period a tax report covers: a year and a bit (a one-stop-shop return is a quarter). */
export const TAX_REPORT_MAX_DAYS = 400;
const DAY_MS = 86_400_000;

/** How the tax report answers over REST: JSON (the default) or the same rows as CSV. */
export const ZTaxReportFormat = z.enum(['json', 'csv']);

/**
 * The tax report's query: a period, `from` inclusive and `to` exclusive (instants with an offset:
 * `2026-01-01T00:00:00Z`), at most 400 days long, and the answer's format.
 */
export const ZTaxReportQuery = z
  .strictObject({
    storeId: z.string().min(1).max(32),
    from: z.iso
      .datetime({ offset: true })
      .meta({ description: 'The start of the period, inclusive (`2026-01-01T00:00:00Z`)' }),
    to: z.iso
      .datetime({ offset: true })
      .meta({ description: 'The end of the period, exclusive (`2026-04-01T00:00:00Z`)' }),
    format: ZTaxReportFormat.optional().meta({
      description:
        '`json` (the default) or `csv`: the rows as `text/csv`, a header line first (REST only; /trpc answers JSON)',
    }),
  })
  .superRefine((q, ctx) => {
    const span = Date.parse(q.to) - Date.parse(q.from);
    if (span < 0) ctx.addIssue({ code: 'custom', path: ['from'], message: '`from` is after `to`.' });
    else if (span > TAX_REPORT_MAX_DAYS * DAY_MS)
      ctx.addIssue({ code: 'custom', path: ['to'], message: `The period is longer than ${TAX_REPORT_MAX_DAYS} days.` });
  });
export type TTaxReportQuery = z.infer<typeof ZTaxReportQuery>;

/**
 * One line of the tax report: the invoices of the period less its credit notes, for one country,
 * rate, reverse charge and currency. An order whose lines have two rates is in two rows.
 */
export const ZTaxReportRow = z.object({
  country: z.string().meta({ description: "The country the tax was worked out for (the buyer's billing country)" }),
  rate: z.number().meta({ description: "The line's rate, as a fraction (0.19)" }),
  reverseCharge: z.boolean().meta({ description: 'B2B sales whose buyer accounts for the tax (rate 0)' }),
  currency: z.string().meta({ description: 'The currency of the orders (ISO 4217)' }),
  taxable: z.number().meta({
    description: "The lines' net amount (without tax, after discounts), invoices less credit notes",
  }),
  tax: z.number().meta({ description: "The lines' tax, invoices less credit notes" }),
  invoices: ZCount.meta({ description: 'Invoices of the period with a line in this row' }),
  creditNotes: ZCount.meta({ description: 'Credit notes of the period with a line in this row (subtracted)' }),
});
export type TTaxReportRow = z.infer<typeof ZTaxReportRow>;

export const ZTaxReport = z.object({
  storeId: z.string(),
  livemode: z.boolean(),
  from: z.string().meta({ description: "The period's start, inclusive (ISO 8601, UTC)" }),
  to: z.string().meta({ description: "The period's end, exclusive (ISO 8601, UTC)" }),
  rows: z.array(ZTaxReportRow).meta({ description: 'By country, then rate (highest first), then reverse charge' }),
  totals: z
    .array(z.object({ currency: z.string(), taxable: z.number(), tax: z.number() }))
    .meta({ description: 'The rows summed, one per currency (one unless the store changed its currency)' }),
});
export type TTaxReport = z.infer<typeof ZTaxReport>;
