/** Store rules: public lookup, and management by sellers and their staff. */
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  type TMember,
  type TMerchantStore,
  type TMerchantUpdateStoreInput,
  type TStore,
  type TStoreLookupInput,
  type TStorePermission,
  type TStorePublic,
} from '@svc/schemas';
import type { z } from 'zod';
import type { TTaxSettings, TTaxSettingsInput, ZCreateStoreInput, ZUpdateStoreInput } from '@svc/schemas';
import { AppError, invalidField } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { UserSchema, type User } from '../identity/identity.entities.js';
import { effectivePermissions } from './membership.js';
import { logoUrlOf, storeSettings, toPublicStore } from './store-views.js';
import { knownTaxCountry } from '../tax/rates.js';
import { StoreMemberSchema, StoreSchema, type Store, type StoreMember } from './stores.entities.js';

/** Subdomains that name our own hosts or invite phishing. */
export const RESERVED_SUBDOMAINS = new Set([
  'www',
  'api',
  'app',
  'admin',
  'administrator',
  'dashboard',
  'auth',
  'login',
  'account',
  'accounts',
  'billing',
  'checkout',
  'pay',
  'payment',
  'payments',
  'mail',
  'email',
  'smtp',
  'static',
  'assets',
  'cdn',
  'media',
  'files',
  'docs',
  'help',
  'support',
  'status',
  'blog',
  'dev',
  'staging',
  'test',
  'internal',
  'svc',
  'root',
  'security',
]);

export function toStoreView(store: Store, member: StoreMember): TStore {
  return {
    id: store.id,
    name: store.name,
    subdomain: store.subdomain,
    currency: store.currency,
    banned: store.banned,
    description: store.description,
    accentColor: store.accentColor ?? null,
    logoUrl: logoUrlOf(store),
    allowedOrigins: store.allowedOrigins,
    role: member.role,
    permissions: effectivePermissions(member),
    settings: storeSettings(store),
    requireTwoFactor: store.requireTwoFactor,
    createdAt: store.createdAt.toISOString(),
    updatedAt: store.updatedAt.toISOString(),
  };
}

function toMemberView(member: StoreMember, user: Pick<User, 'email' | 'name'>): TMember {
  return {
    id: member.id,
    storeId: member.store.id,
    userId: member.user.id,
    email: user.email,
    name: user.name ?? null,
    role: member.role,
    permissions: effectivePermissions(member),
    createdAt: member.createdAt.toISOString(),
  };
}

export async function lookupStoreBySubdomain(ctx: ServiceContext, input: TStoreLookupInput): Promise<TStorePublic> {
  const store = await ctx.em.findOne(StoreSchema, { subdomain: input.subdomain.toLowerCase() });
  if (!store) throw new AppError('not_found', 'Store not found.');
  if (store.banned) throw new AppError('store_banned', 'This store is not available.');
  return toPublicStore(store);
}

export async function createStore(
  ctx: ServiceContext,
  owner: User,
  input: z.infer<typeof ZCreateStoreInput>,
): Promise<TStore> {
  if (RESERVED_SUBDOMAINS.has(input.subdomain)) {
    throw invalidField('subdomain', 'This subdomain is reserved.');
  }
  if (await ctx.em.count(StoreSchema, { subdomain: input.subdomain })) {
    throw new AppError('conflict', 'This subdomain is taken.');
  }
  const now = ctx.clock.now();
  const store = ctx.em.create(StoreSchema, {
    id: newId(),
    name: input.name,
    subdomain: input.subdomain,
    currency: input.currency ?? 'USD',
    banned: false,
    description: '',
    accentColor: null,
    logoFileId: null,
    allowedOrigins: [],
    settings: {},
    paymentMethodsChosenAt: null,
    firstPreviewedAt: null,
    createdAt: now,
    updatedAt: now,
  });
  const member = ctx.em.create(StoreMemberSchema, {
    id: newId(),
    store,
    user: owner,
    role: 'owner',
    permissions: [],
    createdAt: now,
  });
  // A racing create of the same subdomain loses at the unique constraint (-> 409 conflict).
  await ctx.em.flush();
  return toStoreView(store, member);
}

export async function listStores(ctx: ServiceContext, user: User): Promise<TStore[]> {
  const members = await ctx.em.find(
    StoreMemberSchema,
    { user: user.id },
    { populate: ['store'], orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return members.map((member) => toStoreView(member.store.getEntity(), member));
}

export async function getStore(ctx: ServiceContext, member: StoreMember): Promise<TStore> {
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: member.store.id });
  return toStoreView(store, member);
}

/**
 * The tax settings as stored: every field present, registrations once each, and only where svc
 * has rates (tax/rates.ts; `EU` is every member state). Only orders placed afterwards read them:
 * an order keeps the tax it was placed with, and nothing is renumbered (docs/decisions.md, "#42 Tax").
 */
function storedTaxSettings(tax: TTaxSettingsInput): TTaxSettings {
  const registrations = [...new Set(tax.registrations ?? [])];
  registrations.forEach((code, index) => {
    if (code !== 'EU' && !knownTaxCountry(code))
      throw invalidField(`settings.tax.registrations.${index}`, `svc has no tax rates for ${code}.`);
  });
  return {
    behavior: tax.behavior,
    originCountry: tax.originCountry ?? null,
    registrations,
    sellerName: tax.sellerName ?? '',
    sellerAddress: tax.sellerAddress ?? '',
    sellerTaxId: tax.sellerTaxId ?? '',
  };
}

/**
 * The one writer of a store's own fields, for the dashboard (a member with manageSettings) and
 * the merchant API (a key with store:write, which may send only name, description, accentColor).
 */
async function changeStore(
  ctx: ServiceContext,
  storeId: string,
  input: Omit<z.infer<typeof ZUpdateStoreInput>, 'storeId'>,
): Promise<Store> {
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: storeId });
  if (input.name !== undefined) store.name = input.name;
  if (input.currency !== undefined) store.currency = input.currency;
  if (input.description !== undefined) store.description = input.description;
  if (input.accentColor !== undefined) store.accentColor = input.accentColor;
  if (input.allowedOrigins !== undefined) store.allowedOrigins = [...new Set(input.allowedOrigins)];
  if (input.settings !== undefined) {
    const { tax, ...changes } = input.settings;
    const { subscriptionGraceDays, licenseLeaseDays, ...next } = { ...storeSettings(store), ...changes };
    if (input.settings.paymentMethods) next.paymentMethods = [...new Set(input.settings.paymentMethods)];
    if (tax) next.tax = storedTaxSettings(tax);
    store.settings = next;
    store.subscriptionGraceDays = subscriptionGraceDays;
    store.licenseLeaseDays = licenseLeaseDays;
    // The first save of the payment methods is the seller's choice (a new store offers manual already).
    if (input.settings.paymentMethods && !store.paymentMethodsChosenAt) store.paymentMethodsChosenAt = ctx.clock.now();
  }
  store.updatedAt = ctx.clock.now();
  await ctx.em.flush();
  return store;
}

export async function updateStore(
  ctx: ServiceContext,
  member: StoreMember,
  input: z.infer<typeof ZUpdateStoreInput>,
): Promise<TStore> {
  return toStoreView(await changeStore(ctx, member.store.id, input), member);
}

/**
 * The owner's two-factor policy for the store's members. Only the owner sets it (the route is
 * owner-only, and so is this rule: a staff member with manageSettings cannot lift the rule that
 * binds them), and the owner turns it on only with two-factor sign-in on their own account, so
 * the switch never shuts its own owner out.
 */
export async function setRequireTwoFactor(
  ctx: ServiceContext,
  member: StoreMember,
  input: { requireTwoFactor: boolean },
): Promise<TStore> {
  if (member.role !== 'owner')
    throw new AppError('permission_missing', 'Only the store owner decides whether staff need two-factor sign-in.');
  const owner = await ctx.em.findOneOrFail(UserSchema, { id: member.user.id });
  if (input.requireTwoFactor && !owner.totpEnabledAt)
    throw new AppError(
      'two_factor_enrolment_required',
      'Turn on two-factor sign-in for your own account (Account page) before requiring it of your staff.',
    );
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: member.store.id });
  store.requireTwoFactor = input.requireTwoFactor;
  store.updatedAt = ctx.clock.now();
  await ctx.em.flush();
  return toStoreView(store, member);
}

/** The store as a merchant API key reads it: no member's role or permissions, not the operator's ban. */
export function toMerchantStore(store: Store): TMerchantStore {
  return {
    id: store.id,
    name: store.name,
    subdomain: store.subdomain,
    currency: store.currency,
    description: store.description,
    accentColor: store.accentColor ?? null,
    logoUrl: logoUrlOf(store),
    allowedOrigins: store.allowedOrigins,
    settings: storeSettings(store),
    requireTwoFactor: store.requireTwoFactor,
    createdAt: store.createdAt.toISOString(),
    updatedAt: store.updatedAt.toISOString(),
  };
}

export async function getMerchantStore(ctx: ServiceContext, input: { storeId: string }): Promise<TMerchantStore> {
  return toMerchantStore(await ctx.em.findOneOrFail(StoreSchema, { id: input.storeId }));
}

/** A merchant's change of the store's name, look, tax and offline lease days, through the dashboard's writer. */
export async function updateMerchantStore(
  ctx: ServiceContext,
  input: TMerchantUpdateStoreInput,
): Promise<TMerchantStore> {
  const { storeId, name, description, accentColor, settings } = input;
  return toMerchantStore(
    await changeStore(ctx, storeId, {
      name,
      description,
      accentColor,
      // Only what the merchant schema lets through: the tax and the offline lease days.
      ...(settings ? { settings } : {}),
    }),
  );
}

export async function listMembers(ctx: ServiceContext, storeId: string): Promise<TMember[]> {
  const members = await ctx.em.find(
    StoreMemberSchema,
    { store: storeId },
    { populate: ['user'], orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return members.map((member) => toMemberView(member, member.user.getEntity()));
}

export async function addMember(
  ctx: ServiceContext,
  storeId: string,
  input: { email: string; permissions: TStorePermission[] },
): Promise<TMember> {
  const user = await ctx.em.findOne(UserSchema, { email: input.email });
  if (!user) throw new AppError('not_found', 'No account uses this e-mail; ask them to register first.');
  if (await ctx.em.count(StoreMemberSchema, { store: storeId, user: user.id })) {
    throw new AppError('conflict', 'This person is already a member of the store.');
  }
  const member = ctx.em.create(StoreMemberSchema, {
    id: newId(),
    store: storeId,
    user,
    role: 'staff',
    permissions: [...new Set(input.permissions)],
    createdAt: ctx.clock.now(),
  });
  await ctx.em.flush();
  return toMemberView(member, user);
}

async function findStaff(em: EntityManager, storeId: string, memberId: string): Promise<StoreMember> {
  const member = await em.findOne(StoreMemberSchema, { id: memberId, store: storeId }, { populate: ['user'] });
  if (!member) throw new AppError('not_found', 'Member not found.');
  if (member.role === 'owner') throw new AppError('conflict', "The owner's access cannot be changed.");
  return member;
}

export async function updateMember(
  ctx: ServiceContext,
  storeId: string,
  input: { memberId: string; permissions: TStorePermission[] },
): Promise<TMember> {
  const member = await findStaff(ctx.em, storeId, input.memberId);
  member.permissions = [...new Set(input.permissions)];
  await ctx.em.flush();
  return toMemberView(member, member.user.getEntity());
}

export async function removeMember(ctx: ServiceContext, storeId: string, memberId: string): Promise<void> {
  const member = await findStaff(ctx.em, storeId, memberId);
  await ctx.em.remove(member).flush();
}

/** Operator action (`svc ban-store` / `svc unban-store`). */
export async function setStoreBanned(
  ctx: ServiceContext,
  input: { subdomain: string; banned: boolean },
): Promise<Store> {
  const store = await ctx.em.findOne(StoreSchema, { subdomain: input.subdomain.toLowerCase() });
  if (!store) throw new AppError('not_found', `No store has the subdomain ${input.subdomain}.`);
  store.banned = input.banned;
  store.updatedAt = ctx.clock.now();
  await ctx.em.flush();
  return store;
}

/**
 * Notes that the seller's side opened the store's storefront (the Home's setup checklist), the
 * first time only: one conditional update, so a later visit or a racing one changes nothing.
 * The caller decides who is the seller's side (http/storefront.ts); `updatedAt` stays, as the
 * storefront's ETag reads it and nothing it shows changed.
 */
export async function markStorePreviewed(ctx: ServiceContext, storeId: string): Promise<void> {
  await ctx.em.nativeUpdate(
    StoreSchema,
    { id: storeId, firstPreviewedAt: null },
    { firstPreviewedAt: ctx.clock.now() },
  );
}
