/**
 * One zod error map that says every validation issue as a sentence a seller understands ("Enter a
 * name.", "The price can have at most two decimals."), instead of zod's own text ("Too small:
 * expected string to have >=1 characters"). The server installs it for every parse (its error
 * body's `issues` keep their `path`; only `message` is this sentence) and so does the dashboard
 * (its zod resolver), so a form and the API say the same thing. A message a schema gives itself
 * (`.min(1, '…')`, a refinement's) wins over the map, as zod's precedence has it.
 *
 * A field's words come from its schema (`.meta({ label: 'minimum quantity' })`) or else from
 * FIELD_LABELS by the last name on the issue's path, or else from the name itself split into words.
 */
import type { z } from 'zod';

export interface FieldLabel {
  /** How a sentence names the field, in lower case unless a proper name: `name`, `e-mail address`. */
  label: string;
  /** For a list: one of its items (`payment method`), so a sentence can say "at least one …". */
  item?: string;
  /** For a field with a shape: what it looks like, said after a colon. */
  shape?: string;
}

/** The fields sellers fill in, by their name in the API. */
export const FIELD_LABELS: Record<string, FieldLabel> = {
  name: { label: 'name' },
  email: { label: 'e-mail address' },
  password: { label: 'password' },
  code: { label: 'code' },
  // A time range's start and end (the events list's, the tax report's; a webhook replay's end, a test clock's new time).
  from: { label: 'start time' },
  to: { label: 'end time' },
  subdomain: { label: 'subdomain', shape: 'lowercase letters, digits and hyphens, such as my-shop' },
  currency: { label: 'currency', shape: 'an ISO 4217 code such as USD or EUR' },
  description: { label: 'description' },
  accentColor: { label: 'accent colour', shape: 'a colour as #rrggbb, such as #1a73e8' },
  allowedOrigins: { label: 'allowed origins', item: 'origin' },
  paymentMethods: { label: 'payment methods', item: 'payment method' },
  manualPaymentInstructions: { label: 'manual payment instructions' },
  receiptNote: { label: 'receipt note' },
  slug: { label: 'slug', shape: 'lowercase letters and digits joined by single hyphens' },
  price: { label: 'price' },
  status: { label: 'status' },
  deliveryMethods: { label: 'delivery methods', item: 'delivery method' },
  deliveryInstructions: { label: 'delivery instructions' },
  activationLimit: { label: 'activation limit' },
  licenseValidityDays: { label: 'validity in days' },
  minQuantity: { label: 'minimum quantity' },
  maxQuantity: { label: 'maximum quantity' },
  customFields: { label: 'custom fields', item: 'custom field' },
  keys: { label: 'keys', item: 'key' },
  discountType: { label: 'discount type' },
  discountValue: { label: 'discount' },
  maxUses: { label: 'maximum uses' },
  expiresAt: { label: 'expiry date' },
  productIds: { label: 'products', item: 'product' },
  url: { label: 'URL', shape: 'a full address starting with https://' },
  events: { label: 'events', item: 'event' },
  scopes: { label: 'scopes', item: 'scope' },
  storeIds: { label: 'stores', item: 'store' },
  permissions: { label: 'permissions', item: 'permission' },
  subject: { label: 'subject' },
  message: { label: 'message' },
  value: { label: 'value' },
  reason: { label: 'reason' },
  quantity: { label: 'quantity' },
  coupon: { label: 'coupon code' },
};

/** The words for the field at `path`: its schema's `label` meta, the table's, or its name in words. */
export function fieldLabel(path: ReadonlyArray<PropertyKey>, meta?: { label?: unknown }): FieldLabel {
  const name = [...path].reverse().find((key): key is string => typeof key === 'string');
  const fromTable = name === undefined ? undefined : FIELD_LABELS[name];
  if (typeof meta?.label === 'string') return { ...fromTable, label: meta.label };
  if (fromTable) return fromTable;
  if (name === undefined) return { label: 'value' };
  return { label: name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase() };
}

/** `a name`, `an e-mail address`; plurals (`payment methods`) take no article. */
const indefinite = (label: string) => (/s$/.test(label) ? label : `${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label}`);
/** `The name`, `The URL`. */
const theLabel = (label: string) => `The ${label}`;

/** A byte count as sellers read it: `1 MB`, `2 MB`, `512 KB`, `100 bytes`. */
export function describeBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  if (mb >= 1) return `${Math.round(mb * 10) / 10} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

type RawIssue = z.core.$ZodRawIssue;

function typeSentence(issue: RawIssue & { expected?: string }, field: FieldLabel): string {
  const { label } = field;
  if (issue.input === undefined || issue.input === null || issue.input === '') {
    return ['string', 'number', 'int', 'bigint', 'date'].includes(issue.expected ?? '')
      ? `Enter ${indefinite(label)}.`
      : `Choose ${indefinite(label)}.`;
  }
  switch (issue.expected) {
    case 'number':
    case 'int':
    case 'bigint':
      return `${theLabel(label)} must be a number.`;
    case 'string':
      return `${theLabel(label)} must be text.`;
    case 'boolean':
      return `${theLabel(label)} must be yes or no.`;
    case 'array':
      return `${theLabel(label)} must be a list.`;
    case 'date':
      return `${theLabel(label)} must be a date.`;
    default:
      return `Check the ${label}.`;
  }
}

function sizeSentence(
  issue: RawIssue & { origin?: string; minimum?: unknown; maximum?: unknown; inclusive?: boolean },
  field: FieldLabel,
): string {
  const { label } = field;
  const small = issue.code === 'too_small';
  const bound = Number(small ? issue.minimum : issue.maximum);
  switch (issue.origin) {
    case 'string':
      if (small && bound <= 1) return `Enter ${indefinite(label)}.`;
      return small
        ? `${theLabel(label)} must be at least ${bound} characters.`
        : `${theLabel(label)} can be at most ${bound} characters.`;
    case 'array':
    case 'set': {
      const item = field.item ?? 'item';
      if (small && bound <= 1) return `Choose at least one ${item}.`;
      return small ? `Choose at least ${bound} ${label}.` : `Choose at most ${bound} ${label}.`;
    }
    case 'date':
      return small ? `${theLabel(label)} is too early.` : `${theLabel(label)} is too late.`;
    case 'file':
      return small ? `${theLabel(label)} is empty.` : `${theLabel(label)} must be ${describeBytes(bound)} or smaller.`;
    default: {
      // Numbers (and bigints).
      if (small) {
        if (issue.inclusive === false) return `${theLabel(label)} must be more than ${bound}.`;
        return `${theLabel(label)} must be at least ${bound}.`;
      }
      if (issue.inclusive === false) return `${theLabel(label)} must be less than ${bound}.`;
      return `${theLabel(label)} can be at most ${bound}.`;
    }
  }
}

function formatSentence(issue: RawIssue & { format?: string }, field: FieldLabel): string {
  switch (issue.format) {
    case 'email':
      return 'Enter an e-mail address such as name@example.com.';
    case 'url':
      return `Enter ${indefinite(field.label)} as a full address starting with https://.`;
    case 'datetime':
    case 'date':
      return `Enter ${indefinite(field.label)} as a date and time.`;
    default:
      return field.shape
        ? `Enter ${indefinite(field.label)} as ${field.shape}.`
        : `${theLabel(field.label)} is not in the right form.`;
  }
}

/** An amount with more than two decimals, said of its field: "The price can have at most two decimals." */
export function twoDecimalsSentence(path: ReadonlyArray<PropertyKey>): string {
  return `${theLabel(fieldLabel(path).label)} can have at most two decimals.`;
}

/**
 * The error map: every zod issue as a sentence. Pass it as zod's `customError`
 * (`z.config({ customError: sellerErrorMap })`) or as a parse's `error`.
 */
export function sellerErrorMap(issue: RawIssue): string {
  const inst = issue.inst as { _zod?: unknown; meta?: () => unknown } | undefined;
  const meta = typeof inst?.meta === 'function' ? (inst.meta() as { label?: unknown } | undefined) : undefined;
  const field = fieldLabel(issue.path ?? [], meta);
  switch (issue.code) {
    case 'invalid_type':
      return typeSentence(issue, field);
    case 'too_small':
    case 'too_big':
      return sizeSentence(issue, field);
    case 'invalid_format':
      return formatSentence(issue, field);
    case 'not_multiple_of': {
      const divisor = Number((issue as RawIssue & { divisor?: unknown }).divisor);
      return divisor === 0.01
        ? twoDecimalsSentence(issue.path ?? [])
        : `${theLabel(field.label)} must be a multiple of ${divisor}.`;
    }
    case 'invalid_value':
      return `Choose ${indefinite(field.label)} from the list.`;
    case 'unrecognized_keys':
      return 'Unknown field.';
    default:
      return `Check the ${field.label}.`;
  }
}
