/** The merchant API's scopes (@svc/schemas API_KEY_SCOPES), grouped by resource, each in words. */
import type { TApiKeyScope } from '@svc/schemas';

export interface ScopeGroup {
  label: string;
  scopes: ReadonlyArray<{ value: TApiKeyScope; description: string }>;
}

export const SCOPE_GROUPS = [
  {
    label: 'Store',
    scopes: [
      {
        value: 'store:read',
        description: 'Read the store: name, currency, its look (description, accent colour, logo) and settings.',
      },
      {
        value: 'store:write',
        description:
          'Rename the store, change its description and accent colour, upload or remove its logo (needs Manage settings).',
      },
    ],
  },
  {
    label: 'Orders',
    scopes: [
      { value: 'order:read', description: 'List orders and read one (needs View orders).' },
      { value: 'order:update', description: 'Change orders: notes, delivered, paid, cancel (needs Edit orders).' },
      { value: 'order:refund', description: 'Refund orders (needs Edit orders).' },
    ],
  },
  {
    label: 'Products',
    scopes: [
      { value: 'product:read', description: 'List products and their license-key stock (needs Manage products).' },
      {
        value: 'product:write',
        description: 'Create, change and archive products, import keys (needs Manage products).',
      },
    ],
  },
  {
    label: 'Coupons',
    scopes: [
      { value: 'coupon:read', description: 'List coupons (needs Manage products).' },
      { value: 'coupon:write', description: 'Create, change and delete coupons (needs Manage products).' },
    ],
  },
  {
    label: 'Licenses',
    scopes: [
      { value: 'license:read', description: 'List licenses and their instances (needs View orders).' },
      { value: 'license:write', description: 'Disable and enable licenses, remove instances (needs Edit orders).' },
    ],
  },
  {
    label: 'Subscriptions',
    scopes: [
      { value: 'subscription:read', description: 'List subscriptions and read one (needs View orders).' },
      { value: 'subscription:write', description: 'Cancel and pause subscriptions (needs Edit orders).' },
    ],
  },
  {
    label: 'Webhooks and events',
    scopes: [
      { value: 'webhook:read', description: 'List webhook endpoints and their delivery log (needs Manage settings).' },
      {
        value: 'webhook:write',
        description: 'Create and change endpoints, rotate secrets, test, retry, replay (needs Manage settings).',
      },
      { value: 'webhook:delete', description: 'Delete webhook endpoints (needs Manage settings).' },
      { value: 'event:read', description: "Read the store's events of the last 30 days (needs Manage settings)." },
    ],
  },
] as const satisfies readonly ScopeGroup[];

// Every scope the API knows is offered once: a new scope in @svc/schemas fails this until it is described here.
type Listed = (typeof SCOPE_GROUPS)[number]['scopes'][number]['value'];
export const everyScopeListed: Exclude<TApiKeyScope, Listed> extends never ? true : never = true;
