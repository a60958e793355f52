/** The stores module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';

/**
 * Whether a store that is not banned lists this origin. Hot path (every cross-origin request):
 * array containment (`@>`) on the GIN index, one row at most, no hydration.
 */
export async function anyStoreAllows(em: EntityManager, origin: string): Promise<boolean> {
  const rows = await preparedRows(
    em,
    'select 1 from store where allowed_origins @> array[?]::text[] and not banned limit 1',
    [origin],
  );
  return rows.length > 0;
}

/**
 * A store by id or subdomain, an id match first: what the buyer's hot paths (cart, order
 * creation) need of it. Hot path: the ORM would hydrate the whole store and its settings.
 */
export async function selectStoreRef(
  em: EntityManager,
  ref: string,
): Promise<{ id: string; currency: string; banned: boolean; tax: Record<string, unknown> | null } | undefined> {
  // The tax settings alone of the settings JSON (null when never set): what pricing a cart needs.
  const [store] = await preparedRows<{
    id: string;
    currency: string;
    banned: boolean;
    tax: Record<string, unknown> | null;
  }>(
    em,
    `select id, currency, banned, settings->'tax' as tax from store where id = ? or subdomain = ? order by (id = ?) desc limit 1`,
    [ref, ref.toLowerCase(), ref],
  );
  return store;
}

/**
 * What a mail the store sends needs of it: its name and the settings (the JSON column, and the
 * two day counts storeSettings folds in). By primary key, no hydration: each settlement's receipt
 * reads it, and a renewal is one (the billing engine's hot path).
 */
export async function selectStoreMailing(
  em: EntityManager,
  storeId: string,
): Promise<
  | { name: string; settings: Record<string, unknown>; subscriptionGraceDays: number; licenseLeaseDays: number }
  | undefined
> {
  const [store] = await preparedRows<{
    name: string;
    settings: Record<string, unknown>;
    subscriptionGraceDays: number;
    licenseLeaseDays: number;
  }>(
    em,
    `select name, settings, subscription_grace_days as "subscriptionGraceDays", license_lease_days as "licenseLeaseDays"
     from store where id = ?`,
    [storeId],
  );
  return store;
}
