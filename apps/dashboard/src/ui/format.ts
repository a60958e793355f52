/** Money and dates as a seller reads them, in the browser's locale. */
const money = new Map<string, Intl.NumberFormat>();

/** An amount in the store's currency (the API's decimal major units, exact to the currency's digits). */
export function formatMoney(amount: number | string, currency: string): string {
  let format = money.get(currency);
  if (!format) {
    format = new Intl.NumberFormat(undefined, { style: 'currency', currency });
    money.set(currency, format);
  }
  return format.format(typeof amount === 'string' ? Number(amount) : amount);
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? dateOnly.format(new Date(iso)) : '—';
}

const bytes = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

/** A file's size: bytes, KB, MB or GB (powers of 1024). */
export function formatBytes(size: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB'];
  let value = size;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${bytes.format(value)} ${units[unit]}`;
}
