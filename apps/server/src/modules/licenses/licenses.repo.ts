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

/** A license's own columns (`k` the key, `p` its product), as every statement here selects them. */
const LICENSE_COLUMNS = `k.id, k.product_id, k.livemode, k.status as key_status, k.assigned_at, k.disabled_at,
  p.license_activation_limit as activation_limit, p.license_validity_days as validity_days,
  (select count(*) from license_instance c where c.license_key_id = k.id)::int as usage`;

/** What the License API needs of a license, in one row. */
export interface LicenseRow {
  id: string;
  product_id: string;
  /** The key's own mode (its product's): the License API answers for it. */
  livemode: boolean;
  key_status: 'available' | 'assigned' | 'revoked';
  assigned_at: Date;
  disabled_at: Date | null;
  activation_limit: number | null;
  validity_days: number | null;
  usage: number;
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
 * wrong key cost the same. `lock` takes the key's row lock (activation and deactivation count
 * instances under it).
 */
export async function lookupLicense(
  em: EntityManager,
  productId: string,
  valueHash: string,
  instanceId: string | null,
  lock: boolean,
): Promise<LicenseRow | undefined> {
  const sql = `select ${LICENSE_COLUMNS},
            i.id as instance_id, i.name as instance_name, i.created_at as instance_created_at
       from license_key k
       join product p on p.id = k.product_id
       left join license_instance i on i.id = ? and i.license_key_id = k.id
      where k.product_id = ? and k.value_hash = ? and k.order_id is not null and k.assigned_at is not null`;
  const params = [instanceId, productId, valueHash];
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
): Promise<LicenseRow | undefined> {
  // Raw: FOR UPDATE OF the key alone, joined to its product for the store check and the settings.
  const rows = await em.execute<LicenseRow[]>(
    `select ${LICENSE_COLUMNS},
            null as instance_id, null as instance_name, null as instance_created_at
       from license_key k join product p on p.id = k.product_id
      where k.id = ? and p.store_id = ? and k.livemode = ? and k.order_id is not null and k.assigned_at is not null
        for update of k`,
    [licenseId, storeId, livemode],
  );
  return rows[0];
}

/** The SQL condition for a license status at `now` (`k` the key, `p` its product). */
function statusCondition(status: TLicenseStatus): string {
  const disabled = `(k.status = 'revoked' or k.disabled_at is not null)`;
  const expired = `(p.license_validity_days is not null and k.assigned_at + p.license_validity_days * interval '1 day' <= ?)`;
  if (status === 'disabled') return disabled;
  if (status === 'expired') return `not ${disabled} and ${expired}`;
  return `not ${disabled} and not ${expired}`;
}

export interface LicensePageFilter {
  storeId: string;
  livemode: boolean;
  productId?: string | undefined;
  status?: TLicenseStatus | undefined;
  now: Date;
}

/**
 * One keyset page of a store's licenses, newest assignment first: `(assigned_at, id) < before`.
 * Raw: a row-value keyset, and the status filter is interval arithmetic on the product's column.
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
  if (filter.status === 'disabled') where.and(statusCondition(filter.status));
  else if (filter.status) where.and(statusCondition(filter.status), filter.now);
  where.before(before, 'k.assigned_at', 'k.id');
  // A listing: on a read replica when there is one (db/replicas.ts).
  return readOnReplica(
    em,
    `select k.id, (extract(epoch from k.assigned_at) * 1000000)::bigint::text as us
       from license_key k join product p on p.id = k.product_id
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
  store_id: string;
  order_number: string;
  customer_email: string;
}

/** The merchant view's rows for `ids` (any order). Raw: key, product and order in one round trip. */
export async function selectMerchantLicenses(em: EntityManager, ids: string[]): Promise<MerchantLicenseRow[]> {
  if (ids.length === 0) return [];
  return preparedRows(
    em,
    `select ${LICENSE_COLUMNS}, k.value_enc, p.store_id, o.number::text as order_number, o.customer_email
       from license_key k join product p on p.id = k.product_id join "order" o on o.id = k.order_id
      where k.id = any(?)`,
    [ids],
  );
}
