/**
 * License API statements. A license is a sold license key (`license_key` with an order); its
 * settings are its product's. Raw SQL where the hot path needs one round trip or the ORM cannot
 * say it (interval arithmetic on a joined column, row-value keysets, FOR UPDATE OF).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TLicenseStatus } from '@svc/schemas';
import { preparedRows } from '../../db/prepared.js';
import { readOnReplica } from '../../db/replicas.js';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';

/**
 * What a license is judged by besides its key and product: its subscription (`s`, none for a
 * one-time sale) and its product's store (`st`: the grace days, the lease days), joined by primary keys.
 */
const SUBSCRIPTION_JOINS = `left join subscription s on s.id = k.subscription_id
       join store st on st.id = p.store_id`;

/**
 * When the license stops being valid. A one-time license: its assignment plus its product's
 * validity days (null: never). A subscription's: its access end as subscription-machine.ts
 * accessEnd says it (the period's end while trialing or active, the grace after a failed renewal,
 * the pause, the end; null otherwise), so the License API, the merchant's views and the billing
 * engine agree.
 */
const EXPIRES_AT = `case when k.subscription_id is null
    then k.assigned_at + p.license_validity_days * interval '1 day'
    else case s.status
      when 'trialing' then s.current_period_end
      when 'active' then s.current_period_end
      when 'past_due' then s.past_due_at + st.subscription_grace_days * interval '1 day'
      when 'paused' then s.paused_at
      when 'canceled' then s.ended_at
    end end`;

/**
 * The license's status at the statement's `now` parameter (`?`), the first that applies:
 * `disabled` (the seller, or a refund), `inactive` (its subscription is paused, or was never paid,
 * or is gone), `expired` (a canceled subscription, or past the expiry), else `active`. A test
 * subscription is judged at its own clock (clock_time, null for a live one), not the service's.
 */
const STATUS = `case
    when k.status = 'revoked' or k.disabled_at is not null then 'disabled'
    when k.subscription_id is not null and (s.status is null or s.status not in ('trialing', 'active', 'past_due', 'canceled'))
      then 'inactive'
    when s.status = 'canceled' then 'expired'
    when (${EXPIRES_AT}) <= coalesce(s.clock_time, ?) then 'expired'
    else 'active' end`;

/**
 * A license's own columns (`k` the key, `p` its product, joined with SUBSCRIPTION_JOINS), as
 * every statement here selects them; its status takes one `now` parameter.
 */
const LICENSE_COLUMNS = `k.id, k.product_id, k.livemode, k.subscription_id, k.status as key_status, k.assigned_at, k.disabled_at,
  p.license_activation_limit as activation_limit, ${EXPIRES_AT} as expires_at, ${STATUS} as status,
  (select count(*) from license_instance c where c.license_key_id = k.id)::int as usage,
  p.store_id, st.license_lease_days as lease_days, s.clock_time`;

/** What the License API needs of a license, in one row. */
export interface LicenseRow {
  id: string;
  product_id: string;
  /** The key's own mode (its product's): the License API answers for it. */
  livemode: boolean;
  /** The subscription it follows; null for a one-time sale. */
  subscription_id: string | null;
  key_status: 'available' | 'assigned' | 'revoked';
  assigned_at: Date;
  disabled_at: Date | null;
  activation_limit: number | null;
  expires_at: Date | null;
  /** At the `now` the statement was given (STATUS). */
  status: TLicenseStatus;
  usage: number;
  store_id: string;
  /** The store's licenseLeaseDays (an offline lease lasts at most this many days). */
  lease_days: number;
  /** A test subscription's clock, at which it is judged; null otherwise. */
  clock_time: Date | null;
  /** The named instance, when one was asked for and it is this license's. */
  instance_id: string | null;
  instance_name: string | null;
  instance_created_at: Date | null;
}

/**
 * The sold key of `productId` whose value hashes to `valueHash`, with its product's settings,
 * its instance count and (when `instanceId` is given) that instance. Hot path (every launch of
 * the merchant's software validates): one statement on the (product_id, value_hash) unique
 * index, the same statement whether the product exists or not, so an unknown product and a
 * wrong key cost the same. A subscription's license is judged by its subscription in the same
 * statement (its row and its store's by primary key), so validation stays one round trip. `lock`
 * takes the key's row lock (activation and deactivation count instances under it).
 */
export async function lookupLicense(
  em: EntityManager,
  productId: string,
  valueHash: string,
  instanceId: string | null,
  lock: boolean,
  now: Date,
): Promise<LicenseRow | undefined> {
  const sql = `select ${LICENSE_COLUMNS},
            i.id as instance_id, i.name as instance_name, i.created_at as instance_created_at
       from license_key k
       join product p on p.id = k.product_id
       ${SUBSCRIPTION_JOINS}
       left join license_instance i on i.id = ? and i.license_key_id = k.id
      where k.product_id = ? and k.value_hash = ? and k.order_id is not null and k.assigned_at is not null`;
  const params = [now, instanceId, productId, valueHash];
  if (lock) return (await em.execute<LicenseRow[]>(`${sql} for update of k`, params))[0];
  // Validation, outside a transaction: a named prepared statement (db/prepared.ts), parsed and
  // planned once per connection (em.execute inlined the values, a new statement text per key:
  // planning it was most of the database's time per validation).
  return (await preparedRows<LicenseRow>(em, sql, params))[0];
}

/** The license's row again under its row lock (the merchant's disable, enable and instance removal). */
export async function lockLicenseOfStore(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  licenseId: string,
  now: Date,
): Promise<LicenseRow | undefined> {
  // Raw: FOR UPDATE OF the key alone, joined to its product for the store check and the settings.
  const rows = await em.execute<LicenseRow[]>(
    `select ${LICENSE_COLUMNS},
            null as instance_id, null as instance_name, null as instance_created_at
       from license_key k join product p on p.id = k.product_id
       ${SUBSCRIPTION_JOINS}
      where k.id = ? and p.store_id = ? and k.livemode = ? and k.order_id is not null and k.assigned_at is not null
        for update of k`,
    [now, licenseId, storeId, livemode],
  );
  return rows[0];
}

export interface LicensePageFilter {
  storeId: string;
  livemode: boolean;
  productId?: string | undefined;
  status?: TLicenseStatus | undefined;
  /** The keys that follow one subscription: the license_key_subscription_index. */
  subscriptionId?: string | undefined;
  now: Date;
}

/**
 * One keyset page of a store's licenses, newest assignment first: `(assigned_at, id) < before`.
 * Raw: a row-value keyset, and the status filter is STATUS, the very expression the views show.
 */
export async function selectLicensePage(
  em: EntityManager,
  filter: LicensePageFilter,
  before: KeysetPosition | undefined,
  limit: number,
): Promise<Array<{ id: string; us: string }>> {
  const where = new KeysetWhere('p.store_id = ?', filter.storeId)
    .and('k.livemode = ?', filter.livemode)
    .and('k.order_id is not null')
    .and('k.assigned_at is not null');
  if (filter.productId) where.and('k.product_id = ?', filter.productId);
  if (filter.subscriptionId) where.and('k.subscription_id = ?', filter.subscriptionId);
  if (filter.status) where.and(`(${STATUS}) = ?`, filter.now, filter.status);
  where.before(before, 'k.assigned_at', 'k.id');
  // A listing: on a read replica when there is one (db/replicas.ts).
  return readOnReplica(
    em,
    `select k.id, (extract(epoch from k.assigned_at) * 1000000)::bigint::text as us
       from license_key k join product p on p.id = k.product_id
       ${filter.status ? SUBSCRIPTION_JOINS : ''}
      where ${where.sql}
      order by k.assigned_at desc, k.id desc limit ?`,
    [...where.params, limit],
  );
}

/**
 * The store's sold keys of one mode whose value hashes to `valueHash` (the License API's hash of
 * the whole key), newest first: at most one per product, the (product_id, value_hash) unique index probed
 * once for each of the store's products. Raw: the probe by index for every product in one
 * statement, with the store check, which the ORM would make two queries of.
 */
export async function selectLicensesByHash(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  valueHash: string,
): Promise<Array<{ id: string }>> {
  return em.execute(
    `select k.id from product p join license_key k on k.product_id = p.id and k.value_hash = ?
      where p.store_id = ? and p.livemode = ? and k.order_id is not null and k.assigned_at is not null
      order by k.assigned_at desc, k.id desc`,
    [valueHash, storeId, livemode],
  );
}

/** What the merchant view adds to a license: whose it is, and its sealed value for the mask. */
export interface MerchantLicenseRow extends Omit<LicenseRow, 'instance_id' | 'instance_name' | 'instance_created_at'> {
  value_enc: string;
  order_number: string;
  customer_email: string;
}

/**
 * The merchant view's rows for `ids` (any order), their status at `now`. Raw: key, product,
 * subscription and order in one round trip.
 */
export async function selectMerchantLicenses(
  em: EntityManager,
  ids: string[],
  now: Date,
): Promise<MerchantLicenseRow[]> {
  if (ids.length === 0) return [];
  return preparedRows(
    em,
    `select ${LICENSE_COLUMNS}, k.value_enc, o.number::text as order_number, o.customer_email
       from license_key k join product p on p.id = k.product_id join "order" o on o.id = k.order_id
       ${SUBSCRIPTION_JOINS}
      where k.id = any(?)`,
    [now, ids],
  );
}
