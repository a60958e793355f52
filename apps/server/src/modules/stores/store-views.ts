/**
 * How a store reads to others: its public face and its settings with their defaults. Plain
 * functions of the entity, so other modules (receipts, payments, delivery) read them without the
 * store's services.
 */
import { TAX_SETTINGS_OFF, ZStoreSettings, type TStorePublic, type TStoreSettings } from '@svc/schemas';
import type { Store } from './stores.entities.js';

/** Where the storefront serves the store's logo (http/storefront.ts), or null without one. */
export function logoUrlOf(store: Store): string | null {
  return store.logoFileId ? `/s/${store.subdomain}/logo/${store.logoFileId}` : null;
}

export function toPublicStore(store: Store): TStorePublic {
  return {
    id: store.id,
    name: store.name,
    subdomain: store.subdomain,
    currency: store.currency,
    description: store.description,
    accentColor: store.accentColor ?? null,
    logoUrl: logoUrlOf(store),
    createdAt: store.createdAt.toISOString(),
  };
}

const DEFAULT_SETTINGS: Omit<TStoreSettings, 'subscriptionGraceDays' | 'licenseLeaseDays'> = {
  paymentMethods: ['manual'],
  manualPaymentInstructions: '',
  emailOrderAccess: true,
  receiptsEnabled: true,
  receiptNote: '',
  tax: TAX_SETTINGS_OFF,
};

/** The settings kept in the JSON column, each optional; built once (a zod schema is costly to build). */
const ZStoredSettings = ZStoreSettings.omit({ subscriptionGraceDays: true, licenseLeaseDays: true }).partial();

/** The store's settings with defaults for what was never set (the grace and lease days are columns of their own). */
export function storeSettings(
  store: Pick<Store, 'settings' | 'subscriptionGraceDays' | 'licenseLeaseDays'>,
): TStoreSettings {
  const parsed = ZStoredSettings.safeParse(store.settings);
  return {
    ...DEFAULT_SETTINGS,
    ...(parsed.success ? parsed.data : {}),
    subscriptionGraceDays: store.subscriptionGraceDays,
    licenseLeaseDays: store.licenseLeaseDays,
  };
}
