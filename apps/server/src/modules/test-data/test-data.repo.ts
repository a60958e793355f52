/**
 * The statements of the wipe of a store's test data (docs/architecture.md, Test mode) and of its job rows. Raw SQL:
 * each batch is one `DELETE ... WHERE id IN (SELECT ... LIMIT n)` (the ORM would load every row
 * to delete it), and the job's claim takes a row with FOR UPDATE SKIP LOCKED.
 *
 * Every DELETE names `livemode = false` itself: on the table's own column, and for the three
 * tables without one (payment, feedback, customer_session) on the parent it goes through. No
 * statement can reach a live row, whatever the rows of another table say.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TestDataWipe } from './test-data.entities.js';

/** A wipe's row as raw SQL reads it (timestamps are text: lib/timestamps.ts). */
export interface WipeRow {
  id: string;
  store_id: string;
  status: TestDataWipe['status'];
  requested_by: string;
  deleted: Record<string, number>;
  error: string | null;
  locked_until: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

const COLUMNS = `id, store_id, status, requested_by, deleted, error, locked_until, created_at, started_at, finished_at`;

/** Queues a wipe of the store unless one waits or runs already (the partial unique index); null when one does. */
export async function insertWipe(
  em: EntityManager,
  row: { id: string; storeId: string; requestedBy: string; now: Date },
): Promise<WipeRow | null> {
  // Raw: ON CONFLICT on the partial unique index (one queued or running wipe per store).
  const rows = await em.execute<WipeRow[]>(
    `insert into test_data_wipe (id, store_id, status, requested_by, deleted, created_at)
     values (?, ?, 'queued', ?, '{}', ?)
     on conflict (store_id) where status in ('queued', 'running') do nothing
     returning ${COLUMNS}`,
    [row.id, row.storeId, row.requestedBy, row.now],
  );
  return rows[0] ?? null;
}

/** The store's wipe that waits or runs, if any. */
export async function findActiveWipe(em: EntityManager, storeId: string): Promise<WipeRow | null> {
  // Raw: the same row shape as the insert's RETURNING.
  const rows = await em.execute<WipeRow[]>(
    `select ${COLUMNS} from test_data_wipe where store_id = ? and status in ('queued', 'running')`,
    [storeId],
  );
  return rows[0] ?? null;
}

/** One of the store's wipes. */
export async function findWipe(em: EntityManager, storeId: string, id: string): Promise<WipeRow | null> {
  // Raw: the same row shape as the insert's RETURNING.
  const rows = await em.execute<WipeRow[]>(`select ${COLUMNS} from test_data_wipe where id = ? and store_id = ?`, [
    id,
    storeId,
  ]);
  return rows[0] ?? null;
}

/**
 * Takes the oldest wipe that waits, or runs under a lease that ran out (its runner died), and
 * holds it until `lease`. Runners in several processes take different wipes (SKIP LOCKED).
 */
export async function claimWipe(em: EntityManager, opts: { now: Date; lease: Date }): Promise<WipeRow | null> {
  // Raw: FOR UPDATE SKIP LOCKED, and RETURNING the row taken.
  const rows = await em.execute<WipeRow[]>(
    `update test_data_wipe w set status = 'running', locked_until = ?, started_at = coalesce(w.started_at, ?)
     where w.id = (
       select id from test_data_wipe
       where status = 'queued' or (status = 'running' and (locked_until is null or locked_until <= ?))
       order by created_at limit 1 for update skip locked
     )
     returning ${COLUMNS.split(', ')
       .map((c) => `w.${c}`)
       .join(', ')}`,
    [opts.lease, opts.now, opts.now],
  );
  return rows[0] ?? null;
}

/**
 * Adds `count` rows of `table` to the wipe's counts and moves its lease on, if the runner still
 * holds it (`lease`). In the batch's transaction: the counts are exactly what was deleted. False
 * when the lease was lost (the caller rolls the batch back).
 */
export async function recordBatch(
  em: EntityManager,
  opts: { id: string; lease: Date; nextLease: Date; table: string; count: number },
): Promise<boolean> {
  // Raw: jsonb arithmetic on one key, guarded by the lease.
  const rows = await em.execute<Array<{ id: string }>>(
    `update test_data_wipe
     set deleted = jsonb_set(deleted, array[?::text], to_jsonb(coalesce((deleted ->> ?::text)::bigint, 0) + ?)),
         locked_until = ?
     where id = ? and status = 'running' and locked_until = ?
     returning id`,
    [opts.table, opts.table, opts.count, opts.nextLease, opts.id, opts.lease],
  );
  return rows.length === 1;
}

/** Moves the lease on without a batch (a step that had nothing to delete). False when it was lost. */
export async function renewLease(
  em: EntityManager,
  opts: { id: string; lease: Date; nextLease: Date },
): Promise<boolean> {
  // Raw: guarded by the lease, as recordBatch.
  const rows = await em.execute<Array<{ id: string }>>(
    `update test_data_wipe set locked_until = ? where id = ? and status = 'running' and locked_until = ? returning id`,
    [opts.nextLease, opts.id, opts.lease],
  );
  return rows.length === 1;
}

/** Ends the wipe (`succeeded` or `failed`), if the runner still holds it. */
export async function finishWipe(
  em: EntityManager,
  opts: { id: string; lease: Date; status: 'succeeded' | 'failed'; error: string | null; now: Date },
): Promise<boolean> {
  // Raw: guarded by the lease, as recordBatch.
  const rows = await em.execute<Array<{ id: string }>>(
    `update test_data_wipe set status = ?, error = ?, finished_at = ?, locked_until = null
     where id = ? and status = 'running' and locked_until = ? returning id`,
    [opts.status, opts.error, opts.now, opts.id, opts.lease],
  );
  return rows.length === 1;
}

/** Gives the wipe back (a runner stopping): another runner takes it over at once. */
export async function releaseWipe(em: EntityManager, opts: { id: string; lease: Date; now: Date }): Promise<void> {
  // Raw: guarded by the lease, as recordBatch.
  await em.execute(
    `update test_data_wipe set locked_until = ? where id = ? and status = 'running' and locked_until = ?`,
    [opts.now, opts.id, opts.lease],
  );
}

/** A table's batch: deletes up to `limit` of the store's test rows; returns how many. */
export interface WipeStep {
  table: string;
  deleteBatch(em: EntityManager, storeId: string, limit: number): Promise<number>;
}

/** `delete ... where id in (<select ids>)` and how many went. */
async function deleteIds(em: EntityManager, sql: string, params: unknown[]): Promise<number> {
  const rows = await em.execute<Array<{ id: string }>>(sql, params);
  return rows.length;
}

/**
 * A step deleting the test rows `select` picks (a query of `id`s taking storeId and the limit);
 * `table` names `livemode = false` again in the DELETE itself when it has the column.
 */
function step(table: string, select: string, ownColumn = true): WipeStep {
  return {
    table,
    deleteBatch: (em, storeId, limit) =>
      deleteIds(
        em,
        `delete from "${table}" where id in (${select} limit ?)${ownColumn ? ' and livemode = false' : ''} returning id`,
        [storeId, limit],
      ),
  };
}

/** A product's or file's stored objects to remove before its row goes. */
export interface StoredObjects {
  id: string;
  keys: string[];
}

/** The store's test files (product files, payment proofs): their storage keys, up to `limit`. */
export async function selectTestFiles(em: EntityManager, storeId: string, limit: number): Promise<StoredObjects[]> {
  // Raw: the batch's ids and storage keys, by the (store_id, livemode) index.
  const rows = await em.execute<Array<{ id: string; storage_key: string }>>(
    `select id, storage_key from file where store_id = ? and livemode = false limit ?`,
    [storeId, limit],
  );
  return rows.map((row) => ({ id: row.id, keys: [row.storage_key] }));
}

/**
 * The store's test products with their images' storage keys (`<storeId>/<imageId>` and its
 * `-w<width>` renditions, as images.service.ts stores them), up to `limit`.
 */
export async function selectTestProducts(em: EntityManager, storeId: string, limit: number): Promise<StoredObjects[]> {
  // Raw: the batch's ids and images, by the (store_id, livemode, ...) index.
  const rows = await em.execute<
    Array<{ id: string; images: Array<{ id: string; variants: Array<{ width: number }> }> }>
  >(`select id, images from product where store_id = ? and livemode = false limit ?`, [storeId, limit]);
  return rows.map((row) => ({
    id: row.id,
    keys: row.images.flatMap((image) => [
      `${storeId}/${image.id}`,
      ...image.variants.map((v) => `${storeId}/${image.id}-w${v.width}`),
    ]),
  }));
}

/** Deletes the store's test rows of `table` (`file` or `product`) with these ids; returns how many. */
export function deleteTestRowsById(
  em: EntityManager,
  table: 'file' | 'product',
  storeId: string,
  ids: string[],
): Promise<number> {
  // Raw: the ids a select above picked, and the store and mode named again.
  return deleteIds(em, `delete from "${table}" where id in (?) and store_id = ? and livemode = false returning id`, [
    ids,
    storeId,
  ]);
}

/**
 * The tables without stored objects, children first: each step's rows are referenced by none of
 * the later steps' tables' test rows. Files and products (with stored objects) are the runner's:
 * files after the orders' and products' other children, products after their keys and files.
 * Index use: every select starts from an index leading with (store_id, livemode) (event,
 * subscription, order, ticket, customer, coupon, blacklist_entry, webhook, product,
 * saved_payment_method, license_signing_key by store) and reaches children through their parent's index (license_key and
 * product_plan by product, license_instance by key, webhook_delivery by endpoint, ticket_message by
 * ticket, payment by order, feedback by order, order_line by order, customer_session by customer,
 * test_gateway_charge by method).
 */
export const STEPS_BEFORE_FILES: WipeStep[] = [
  step(
    'license_instance',
    `select i.id from license_instance i join license_key k on k.id = i.license_key_id join product p on p.id = k.product_id
     where p.store_id = ? and p.livemode = false and k.livemode = false and i.livemode = false`,
  ),
  step(
    'license_key',
    `select k.id from license_key k join product p on p.id = k.product_id
     where p.store_id = ? and p.livemode = false and k.livemode = false`,
  ),
  step(
    'product_plan',
    `select pl.id from product_plan pl join product p on p.id = pl.product_id
     where p.store_id = ? and p.livemode = false and pl.livemode = false`,
  ),
  step(
    'webhook_delivery',
    `select d.id from webhook_delivery d join webhook w on w.id = d.webhook_id
     where w.store_id = ? and w.livemode = false and d.livemode = false`,
  ),
  step('event', `select id from event where store_id = ? and livemode = false`),
  step('subscription', `select id from subscription where store_id = ? and livemode = false`),
  step(
    'ticket_message',
    `select m.id from ticket_message m join ticket t on t.id = m.ticket_id
     where t.store_id = ? and t.livemode = false and m.livemode = false`,
  ),
  step('ticket', `select id from ticket where store_id = ? and livemode = false`),
  // A saved method's test charges, then the method (its order goes after the files).
  step(
    'test_gateway_charge',
    `select c.id from test_gateway_charge c join saved_payment_method m on m.id = c.method_id
     where m.store_id = ? and m.livemode = false and c.livemode = false`,
  ),
  step('saved_payment_method', `select id from saved_payment_method where store_id = ? and livemode = false`),
  // No livemode of their own: a payment and a feedback are their order's.
  step(
    'payment',
    `select pa.id from payment pa join "order" o on o.id = pa.order_id where o.store_id = ? and o.livemode = false`,
    false,
  ),
  step(
    'feedback',
    `select f.id from feedback f join "order" o on o.id = f.order_id where o.store_id = ? and o.livemode = false`,
    false,
  ),
];

export const STEPS_AFTER_FILES: WipeStep[] = [
  step(
    'order_line',
    `select l.id from order_line l join "order" o on o.id = l.order_id
     where o.store_id = ? and o.livemode = false and l.livemode = false`,
  ),
  step('order', `select id from "order" where store_id = ? and livemode = false`),
  // The test mode's invoice and credit note counters (its numbering starts again at 1): a few rows
  // by the primary key's (store_id, livemode) prefix; no id of their own.
  {
    table: 'invoice_counter',
    deleteBatch: (em, storeId, limit) =>
      deleteIds(
        em,
        `delete from invoice_counter where (store_id, livemode, kind, year) in (
           select store_id, livemode, kind, year from invoice_counter where store_id = ? and livemode = false limit ?)
         returning kind || '-' || year as id`,
        [storeId, limit],
      ),
  },
];

export const STEPS_AFTER_PRODUCTS: WipeStep[] = [
  step('coupon', `select id from coupon where store_id = ? and livemode = false`),
  step('blacklist_entry', `select id from blacklist_entry where store_id = ? and livemode = false`),
  step('webhook', `select id from webhook where store_id = ? and livemode = false`),
  // The test-mode key that signs test licenses' offline leases (a new one is made on the next use).
  step('license_signing_key', `select id from license_signing_key where store_id = ? and livemode = false`),
  // A customer's sign-in sessions (no livemode of their own: their customer's).
  {
    table: 'customer_session',
    deleteBatch: (em, storeId, limit) =>
      deleteIds(
        em,
        `delete from customer_session where id_hash in (
           select s.id_hash from customer_session s join customer c on c.id = s.customer_id
           where c.store_id = ? and c.livemode = false limit ?)
         returning id_hash as id`,
        [storeId, limit],
      ),
  },
  step('customer', `select id from customer where store_id = ? and livemode = false`),
];
