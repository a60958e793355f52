/**
 * The checkout's tax (docs/architecture.md, Tax and invoices): the billing fields a store that
 * charges tax asks for (country, an optional VAT id, name and address), the summary's tax rows, and
 * the call that works the order's tax out again (`POST /api/checkout/billing`). A store with tax
 * off shows none of it.
 */
import type { COUNTRY_CODES, TCheckoutSession } from '@svc/schemas';
import { field, h, money, type Field } from './common.js';

type Country = (typeof COUNTRY_CODES)[number];

/**
 * The billing countries, as @svc/schemas' COUNTRY_CODES (the page loads plain modules, not the
 * schemas package): `Unlisted` below fails the build if one is missing here, `satisfies` if one is
 * not a code there.
 */
// prettier-ignore
const CODES = [
  'AD', 'AE', 'AF', 'AG', 'AI', 'AL', 'AM', 'AO', 'AQ', 'AR', 'AS', 'AT', 'AU', 'AW', 'AX', 'AZ', 'BA', 'BB', 'BD', 'BE',
  'BF', 'BG', 'BH', 'BI', 'BJ', 'BL', 'BM', 'BN', 'BO', 'BQ', 'BR', 'BS', 'BT', 'BV', 'BW', 'BY', 'BZ', 'CA', 'CC', 'CD',
  'CF', 'CG', 'CH', 'CI', 'CK', 'CL', 'CM', 'CN', 'CO', 'CR', 'CU', 'CV', 'CW', 'CX', 'CY', 'CZ', 'DE', 'DJ', 'DK', 'DM',
  'DO', 'DZ', 'EC', 'EE', 'EG', 'EH', 'ER', 'ES', 'ET', 'FI', 'FJ', 'FK', 'FM', 'FO', 'FR', 'GA', 'GB', 'GD', 'GE', 'GF',
  'GG', 'GH', 'GI', 'GL', 'GM', 'GN', 'GP', 'GQ', 'GR', 'GS', 'GT', 'GU', 'GW', 'GY', 'HK', 'HM', 'HN', 'HR', 'HT', 'HU',
  'ID', 'IE', 'IL', 'IM', 'IN', 'IO', 'IQ', 'IR', 'IS', 'IT', 'JE', 'JM', 'JO', 'JP', 'KE', 'KG', 'KH', 'KI', 'KM', 'KN',
  'KP', 'KR', 'KW', 'KY', 'KZ', 'LA', 'LB', 'LC', 'LI', 'LK', 'LR', 'LS', 'LT', 'LU', 'LV', 'LY', 'MA', 'MC', 'MD', 'ME',
  'MF', 'MG', 'MH', 'MK', 'ML', 'MM', 'MN', 'MO', 'MP', 'MQ', 'MR', 'MS', 'MT', 'MU', 'MV', 'MW', 'MX', 'MY', 'MZ', 'NA',
  'NC', 'NE', 'NF', 'NG', 'NI', 'NL', 'NO', 'NP', 'NR', 'NU', 'NZ', 'OM', 'PA', 'PE', 'PF', 'PG', 'PH', 'PK', 'PL', 'PM',
  'PN', 'PR', 'PS', 'PT', 'PW', 'PY', 'QA', 'RE', 'RO', 'RS', 'RU', 'RW', 'SA', 'SB', 'SC', 'SD', 'SE', 'SG', 'SH', 'SI',
  'SJ', 'SK', 'SL', 'SM', 'SN', 'SO', 'SR', 'SS', 'ST', 'SV', 'SX', 'SY', 'SZ', 'TC', 'TD', 'TF', 'TG', 'TH', 'TJ', 'TK',
  'TL', 'TM', 'TN', 'TO', 'TR', 'TT', 'TV', 'TW', 'TZ', 'UA', 'UG', 'UM', 'US', 'UY', 'UZ', 'VA', 'VC', 'VE', 'VG', 'VI',
  'VN', 'VU', 'WF', 'WS', 'YE', 'YT', 'ZA', 'ZM', 'ZW',
] as const satisfies readonly Country[];
type Unlisted = Exclude<Country, (typeof CODES)[number]>;
const everyCountryListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyCountryListed;

type Order = TCheckoutSession['order'];

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
function countryName(code: string): string {
  try {
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/** Whether the order's store charges tax: else the checkout is as it always was. */
export const taxOn = (order: Order): boolean => order.taxBehavior !== 'off';

const PERCENT = new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 2 });

/** `VAT 19% (DE)`; `VAT (DE)` when the lines' rates differ; `VAT` before a country is known. */
function vatLabel(order: Order): string {
  const rate = order.taxRate === null ? '' : ` ${PERCENT.format(order.taxRate)}`;
  return order.taxCountry ? `VAT${rate} (${order.taxCountry})` : 'VAT';
}

/**
 * The summary's tax rows, always the same number of them for a taxed order (a change of country
 * redraws them in place, nothing under them moves): a reverse-charge sale says so where the VAT
 * would be; prices that include tax show the tax in the total, under it.
 */
export function taxRows(order: Order): { beforeTotal: HTMLElement | null; afterTotal: HTMLElement | null } {
  if (!taxOn(order)) return { beforeTotal: null, afterTotal: null };
  const amount = order.taxCountry ? money(order.taxAmount, order.currency) : '—';
  if (order.reverseCharge) {
    // Kept to one line, as the VAT row it replaces (nothing under the summary moves).
    const row = h(
      'div',
      { class: 'tax reverse-charge' },
      h('dt', {}, 'VAT reverse charge'),
      h('dd', {}, money(0, order.currency)),
    );
    return order.taxBehavior === 'inclusive'
      ? { beforeTotal: null, afterTotal: row }
      : { beforeTotal: row, afterTotal: null };
  }
  if (order.taxBehavior === 'inclusive')
    return {
      beforeTotal: null,
      afterTotal: h('div', { class: 'tax included' }, h('dt', {}, `incl. ${vatLabel(order)}`), h('dd', {}, amount)),
    };
  return {
    beforeTotal: h('div', { class: 'tax' }, h('dt', {}, vatLabel(order)), h('dd', {}, amount)),
    afterTotal: null,
  };
}

/** What the page's status line says once the tax is worked out again (a screen reader hears the new total). */
export function taxStatus(order: Order): string {
  const total = money(order.price, order.currency);
  if (order.reverseCharge) return `VAT reverse charge: no VAT charged, the buyer accounts for it. Total ${total}.`;
  const tax = `${vatLabel(order)} ${money(order.taxAmount, order.currency)}`;
  return order.taxBehavior === 'inclusive' ? `Total ${total}, incl. ${tax}.` : `${tax}. Total ${total}.`;
}

export interface BillingFields {
  fieldset: HTMLElement;
  country: { input: HTMLSelectElement; error: HTMLElement };
  taxId: Field;
  billingName: Field;
  billingAddress: { input: HTMLTextAreaElement; error: HTMLElement };
  /** Says the re-worked tax (or why not) to a screen reader; unseen, so nothing on the page moves. */
  announce(text: string): void;
  /** The body `POST /api/checkout/billing` and `/api/checkout/start` take of these fields. */
  values(): { country: string; taxId: string | null; billingName?: string; billingAddress?: string };
}

/** The billing fieldset: country (the order's, by default), VAT id, name and address, each with its error slot. */
export function billingFields(order: Order): BillingFields {
  const countryError = h('p', { id: 'billing-country-error', class: 'field-error' });
  const options = CODES.map((code) => ({ code, name: countryName(code) })).sort((a, b) =>
    a.name.localeCompare(b.name, 'en'),
  );
  const select = h(
    'select',
    {
      id: 'billing-country',
      name: 'country',
      autocomplete: 'country',
      required: true,
      'aria-describedby': 'billing-country-hint billing-country-error',
    },
    order.taxCountry ? null : h('option', { value: '' }, 'Choose your country'),
    ...options.map(({ code, name }) => h('option', { value: code, selected: code === order.taxCountry }, name)),
  );
  const country = h(
    'div',
    { class: 'field' },
    h('label', { for: 'billing-country' }, 'Billing country', h('span', { class: 'required' }, ' (required)')),
    h('p', { id: 'billing-country-hint', class: 'hint' }, 'The tax is worked out for this country.'),
    select,
    countryError,
  );
  const taxId = field(
    'VAT ID (business)',
    { name: 'taxId', type: 'text', autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false' },
    'Optional. A business in another EU country, with a valid VAT ID, pays no VAT here (reverse charge).',
  );
  const billingName = field(
    'Name on the invoice',
    { name: 'billingName', type: 'text', autocomplete: 'name' },
    'Optional.',
  );
  const addressError = h('p', { id: 'billing-address-error', class: 'field-error' });
  const address = h('textarea', {
    id: 'billing-address',
    name: 'billingAddress',
    rows: '3',
    autocomplete: 'street-address',
    'aria-describedby': 'billing-address-hint billing-address-error',
  });
  const addressField = h(
    'div',
    { class: 'field' },
    h('label', { for: 'billing-address' }, 'Billing address'),
    h('p', { id: 'billing-address-hint', class: 'hint' }, 'Optional. Printed on the invoice.'),
    address,
    addressError,
  );
  const announcer = h('p', { class: 'visually-hidden', role: 'status' });
  const fieldset = h(
    'fieldset',
    { class: 'billing' },
    h('legend', {}, 'Billing'),
    announcer,
    country,
    taxId.wrapper,
    billingName.wrapper,
    addressField,
  );
  return {
    fieldset,
    country: { input: select, error: countryError },
    taxId,
    billingName,
    billingAddress: { input: address, error: addressError },
    announce(text) {
      announcer.textContent = text;
    },
    values() {
      const name = billingName.input.value.trim();
      const where = address.value.trim();
      return {
        country: select.value,
        taxId: taxId.input.value.trim() || null,
        ...(name ? { billingName: name } : {}),
        ...(where ? { billingAddress: where } : {}),
      };
    },
  };
}
