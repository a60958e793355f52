/**
 * The License API (docs/architecture.md, The faces): a license is a sold license key; its product says how many
 * instances it may activate at once and for how many days from its assignment it is valid; a
 * subscription's license is valid while its subscription gives access instead (licenses.repo.ts
 * judges both in the statement that reads the license). The
 * merchant's software activates, validates and deactivates with the key as its credential; the
 * seller (merchant API or dashboard) lists, reads, disables and enables licenses and removes
 * instances. Activation and deactivation run under the key's row lock, so N concurrent
 * activations against a limit of L leave exactly L instances.
 */
import { inTransaction } from '../request/transaction.js';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  TActivateLicenseInput,
  TActivateLicenseResult,
  TDeactivateLicenseInput,
  TDeactivateLicenseResult,
  TFindLicensesByKeyInput,
  TLicense,
  TLicenseInstance,
  TLicenseStatus,
  TListLicensesQuery,
  TMerchantLicense,
  TValidateLicenseInput,
  TValidateLicenseResult,
} from '@svc/schemas';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { LicenseKeySchema } from '../catalog/catalog.entities.js';
import { decryptLicenseKey, licenseKeyHash, maskKey } from '../catalog/license-key-crypto.js';
import { recordEvent } from '../events/outbox.js';
import { signLease } from './lease.js';
import { LicenseInstanceSchema } from './licenses.entities.js';
import {
  lookupLicense,
  lockLicenseOfStore,
  selectLicensePage,
  selectLicensesByHash,
  selectMerchantLicenses,
  type LicenseRow,
} from './licenses.repo.js';

const NOT_FOUND = 'No license with this key for this product.';

type LicenseCore = Pick<
  LicenseRow,
  | 'id'
  | 'product_id'
  | 'livemode'
  | 'subscription_id'
  | 'assigned_at'
  | 'activation_limit'
  | 'expires_at'
  | 'status'
  | 'usage'
>;

/**
 * Why a license with this status does not validate, in the order licenses.repo.ts STATUS judges:
 * disabled before subscription_inactive (the seller's word outranks the subscription's state),
 * before expired (a paused subscription is reported as paused even when its pause date passed).
 */
const INVALID_REASON: Record<TLicenseStatus, TValidateLicenseResult['reason']> = {
  active: null,
  disabled: 'disabled',
  inactive: 'subscription_inactive',
  expired: 'expired',
};

function toLicense(row: LicenseCore): TLicense {
  return {
    id: row.id,
    productId: row.product_id,
    livemode: row.livemode,
    status: row.status,
    activationLimit: row.activation_limit,
    activationUsage: Number(row.usage),
    expiresAt: row.expires_at ? new Date(row.expires_at).toISOString() : null,
    subscriptionId: row.subscription_id,
    createdAt: new Date(row.assigned_at).toISOString(),
  };
}

function toInstance(instance: { id: string; name: string; createdAt: Date }): TLicenseInstance {
  return { id: instance.id, name: instance.name, createdAt: instance.createdAt.toISOString() };
}

/** The key's value as it was stocked (trimmed), hashed as the stock's de-duplication hashes it. */
function hashOf(ctx: ServiceContext, key: string): string {
  return licenseKeyHash(ctx.deps.config, key.trim());
}

/**
 * Instances of a license, counted after its row lock is held. The locking statement's own count
 * is not enough: a statement that waited for the lock still reads with the snapshot it started
 * with, so it would miss the instances the transaction it waited for had added.
 */
async function usageUnderLock(em: EntityManager, licenseId: string): Promise<number> {
  return em.count(LicenseInstanceSchema, { licenseKey: licenseId });
}

/** The offline lease of a license judged active (lease.ts), for `instanceId` when one is named. */
function leaseOf(ctx: ServiceContext, row: LicenseRow, instanceId: string | null, now: Date): Promise<string> {
  return signLease(ctx, {
    licenseId: row.id,
    productId: row.product_id,
    storeId: row.store_id,
    livemode: row.livemode,
    instanceId,
    expiresAt: row.expires_at ? new Date(row.expires_at) : null,
    leaseDays: row.lease_days,
    at: row.clock_time ? new Date(row.clock_time) : now,
    now,
  });
}

function notFound(): AppError {
  return new AppError('not_found', NOT_FOUND);
}

/** Activates `instanceName` (or finds it, activated before: no extra use). */
export async function activateLicense(
  ctx: ServiceContext,
  input: TActivateLicenseInput,
  retried = false,
): Promise<TActivateLicenseResult> {
  const valueHash = hashOf(ctx, input.key);
  const now = ctx.clock.now();
  let activated: { row: LicenseRow; license: TLicense; instance: TLicenseInstance };
  try {
    activated = await inTransaction(ctx, async (tx) => {
      const row = await lookupLicense(tx.em, input.productId, valueHash, null, true, now);
      if (!row) throw notFound();
      row.usage = await usageUnderLock(tx.em, row.id);
      const status = row.status;
      if (status !== 'active')
        throw new AppError('license_inactive', `This license is ${status}; it cannot be activated.`);
      const existing = await tx.em.findOne(LicenseInstanceSchema, { licenseKey: row.id, name: input.instanceName });
      if (existing) return { row, license: toLicense(row), instance: toInstance(existing) };
      if (row.activation_limit !== null && row.usage >= row.activation_limit) {
        throw new AppError(
          'activation_limit_reached',
          `This license has reached its activation limit (${row.activation_limit}); deactivate an instance first.`,
        );
      }
      const instance = tx.em.create(LicenseInstanceSchema, {
        id: newId(),
        licenseKey: row.id,
        livemode: row.livemode,
        name: input.instanceName,
        createdAt: now,
      });
      await tx.em.flush();
      const updated = { ...row, usage: row.usage + 1 };
      await recordLicenseEvent(ctx, tx.em, 'license.activated', row.id, now);
      return { row, license: toLicense(updated), instance: toInstance(instance) };
    });
  } catch (error) {
    // Under the row lock two activations of one name cannot race; this is the constraint's word if they ever do.
    if (error instanceof UniqueConstraintViolationException && !retried) return activateLicense(ctx, input, true);
    throw error;
  }
  // Signed after the commit: the first lease of a store makes its key on a connection of its own,
  // which a transaction holding the license's row lock must not wait for.
  const { row, license, instance } = activated;
  return { activated: true as const, license, instance, lease: await leaseOf(ctx, row, instance.id, now) };
}

/** Whether the license is active (and, when an instance is named, whether it is one of its instances). */
export async function validateLicense(
  ctx: ServiceContext,
  input: TValidateLicenseInput,
): Promise<TValidateLicenseResult> {
  // One prepared read and no entity: the root EntityManager's pool, without forking a unit of work.
  const now = ctx.clock.now();
  const row = await lookupLicense(
    ctx.deps.orm.em,
    input.productId,
    hashOf(ctx, input.key),
    input.instanceId ?? null,
    false,
    now,
  );
  if (!row) throw notFound();
  const license = toLicense(row);
  const instance = row.instance_id
    ? toInstance({ id: row.instance_id, name: row.instance_name!, createdAt: new Date(row.instance_created_at!) })
    : null;
  const reason =
    INVALID_REASON[license.status] ?? (input.instanceId !== undefined && !instance ? 'instance_not_found' : null);
  const lease = reason === null ? await leaseOf(ctx, row, instance?.id ?? null, now) : null;
  return { valid: reason === null, reason, license, instance, lease };
}

/** Frees one instance of the license; an instance that is not the license's is 404. */
export async function deactivateLicense(
  ctx: ServiceContext,
  input: TDeactivateLicenseInput,
): Promise<TDeactivateLicenseResult> {
  const valueHash = hashOf(ctx, input.key);
  const now = ctx.clock.now();
  return inTransaction(ctx, async (tx) => {
    const row = await lookupLicense(tx.em, input.productId, valueHash, input.instanceId, true, now);
    if (!row) throw notFound();
    // Read again under the lock: a deactivation that waited for it may find the instance gone.
    const removed = row.instance_id ? await tx.em.nativeDelete(LicenseInstanceSchema, { id: row.instance_id }) : 0;
    if (removed === 0) throw new AppError('not_found', 'This license has no such instance.');
    row.usage = await usageUnderLock(tx.em, row.id);
    await recordLicenseEvent(ctx, tx.em, 'license.deactivated', row.id, now);
    return { deactivated: true as const, license: toLicense(row) };
  });
}

/** Merchant views of `ids`, in that order, each with its instances (and the store, for events). */
async function merchantLicenses(
  ctx: ServiceContext,
  em: EntityManager,
  ids: string[],
): Promise<Array<{ view: TMerchantLicense; storeId: string; livemode: boolean }>> {
  const now = ctx.clock.now();
  const rows = await selectMerchantLicenses(em, ids, now);
  const instances =
    ids.length === 0
      ? []
      : await em.find(
          LicenseInstanceSchema,
          { licenseKey: { $in: ids } },
          { orderBy: { createdAt: 'asc', id: 'asc' } },
        );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    if (!row) return [];
    const value = decryptLicenseKey(ctx.deps.config, row.value_enc);
    const view: TMerchantLicense = {
      ...toLicense(row),
      orderId: `ORD-${row.order_number}`,
      // The order column keeps '' for "none" (the interface's Order says string); the license says null.
      customerEmail: row.customer_email === '' ? null : row.customer_email,
      masked: maskKey(value),
      instances: instances.filter((instance) => instance.licenseKey.id === id).map(toInstance),
    };
    return [{ view, storeId: row.store_id, livemode: row.livemode }];
  });
}

async function recordLicenseEvent(
  ctx: ServiceContext,
  em: EntityManager,
  type: 'license.activated' | 'license.deactivated' | 'license.disabled' | 'license.enabled',
  licenseId: string,
  now: Date,
): Promise<void> {
  const [license] = await merchantLicenses(ctx, em, [licenseId]);
  await recordEvent(
    { em },
    {
      storeId: license!.storeId,
      livemode: license!.livemode,
      type,
      payload: { license: license!.view },
      at: now,
    },
  );
}

export async function listLicenses(ctx: ServiceContext, input: TListLicensesQuery) {
  const limit = input.limit ?? 50;
  const key = ctx.deps.config.encryptionKey;
  const scope = cursorScope('licenses', {
    storeId: input.storeId,
    livemode: ctx.livemode,
    productId: input.productId,
    status: input.status,
    subscriptionId: input.subscriptionId,
  });
  const before = input.cursor ? decodeCursor(key, scope, input.cursor) : undefined;
  const rows = await selectLicensePage(
    ctx.em,
    {
      storeId: input.storeId,
      livemode: ctx.livemode,
      productId: input.productId,
      status: input.status,
      subscriptionId: input.subscriptionId,
      now: ctx.clock.now(),
    },
    before,
    limit + 1,
  );
  const { page, hasMore, nextCursor } = keysetPage(key, scope, rows, limit, (row) => row.us);
  const licenses = await merchantLicenses(
    ctx,
    ctx.em,
    page.map((row) => row.id),
  );
  return { licenses: licenses.map((license) => license.view), hasMore, nextCursor };
}

/**
 * The store's sold keys whose value is `key` (compared trimmed, hashed as the License API hashes
 * it), as the list shows them: masked. The key is only hashed here; it is never logged or answered.
 */
export async function findLicensesByKey(
  ctx: ServiceContext,
  input: TFindLicensesByKeyInput,
): Promise<{ licenses: TMerchantLicense[] }> {
  const rows = await selectLicensesByHash(ctx.em, input.storeId, ctx.livemode, hashOf(ctx, input.key));
  const licenses = await merchantLicenses(
    ctx,
    ctx.em,
    rows.map((row) => row.id),
  );
  return { licenses: licenses.map((license) => license.view) };
}

export async function getLicense(
  ctx: ServiceContext,
  input: { storeId: string; licenseId: string },
): Promise<TMerchantLicense> {
  const row = await findLicenseOfStore(ctx.em, input.storeId, ctx.livemode, input.licenseId);
  const [license] = await merchantLicenses(ctx, ctx.em, [row.id]);
  return license!.view;
}

async function findLicenseOfStore(em: EntityManager, storeId: string, livemode: boolean, licenseId: string) {
  const key = await em.findOne(
    LicenseKeySchema,
    { id: licenseId, livemode, product: { store: storeId }, order: { $ne: null } },
    { fields: ['id'] },
  );
  if (!key) throw new AppError('not_found', 'No license with this id in this store.');
  return key;
}

/** The seller disables a license (validate answers `disabled`); disabling twice changes nothing. */
export async function disableLicense(
  ctx: ServiceContext,
  input: { storeId: string; licenseId: string },
): Promise<TMerchantLicense> {
  return setDisabled(ctx, input, true);
}

/** The seller enables a license it disabled; a refunded order's license stays disabled (409). */
export async function enableLicense(
  ctx: ServiceContext,
  input: { storeId: string; licenseId: string },
): Promise<TMerchantLicense> {
  return setDisabled(ctx, input, false);
}

async function setDisabled(
  ctx: ServiceContext,
  input: { storeId: string; licenseId: string },
  disable: boolean,
): Promise<TMerchantLicense> {
  const now = ctx.clock.now();
  return inTransaction(ctx, async (tx) => {
    const row = await lockLicenseOfStore(tx.em, input.storeId, ctx.livemode, input.licenseId, now);
    if (!row) throw new AppError('not_found', 'No license with this id in this store.');
    if (!disable && row.key_status === 'revoked')
      throw new AppError('conflict', 'This license was disabled by a refund of its order; it cannot be enabled.');
    if (Boolean(row.disabled_at) !== disable) {
      await tx.em.nativeUpdate(LicenseKeySchema, { id: row.id }, { disabledAt: disable ? now : null });
      await recordLicenseEvent(ctx, tx.em, disable ? 'license.disabled' : 'license.enabled', row.id, now);
    }
    const [license] = await merchantLicenses(ctx, tx.em, [row.id]);
    return license!.view;
  });
}

/** The seller removes an instance (the software on it no longer validates with it). */
export async function removeLicenseInstance(
  ctx: ServiceContext,
  input: { storeId: string; licenseId: string; instanceId: string },
): Promise<void> {
  const now = ctx.clock.now();
  await inTransaction(ctx, async (tx) => {
    const row = await lockLicenseOfStore(tx.em, input.storeId, ctx.livemode, input.licenseId, now);
    if (!row) throw new AppError('not_found', 'No license with this id in this store.');
    const removed = await tx.em.nativeDelete(LicenseInstanceSchema, { id: input.instanceId, licenseKey: row.id });
    if (removed === 0) throw new AppError('not_found', 'This license has no such instance.');
    await recordLicenseEvent(ctx, tx.em, 'license.deactivated', row.id, now);
  });
}
