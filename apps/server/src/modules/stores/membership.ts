/** Who may do what in a store: the owner holds every permission, staff hold what they were given. */
import type { ServiceContext } from '../request/context.js';
import type { TStorePermission } from '@svc/schemas';
import { StoreMemberSchema, type StoreMember } from './stores.entities.js';

export function hasPermission(
  member: Pick<StoreMember, 'role' | 'permissions'>,
  permission: TStorePermission,
): boolean {
  return member.role === 'owner' || member.permissions.includes(permission);
}

export function effectivePermissions(member: StoreMember): TStorePermission[] {
  return member.role === 'owner'
    ? ['viewOrders', 'editOrders', 'manageProducts', 'manageSettings']
    : (member.permissions as TStorePermission[]);
}

/**
 * The user's membership of the store, with the store row joined in the same query: the guard
 * reads the owner's two-factor policy from it, and a later read of the store by its id comes from
 * the identity map.
 */
export function findMembership(
  ctx: Pick<ServiceContext, 'em'>,
  storeId: string,
  userId: string,
): Promise<StoreMember | null> {
  return ctx.em.findOne(StoreMemberSchema, { store: storeId, user: userId }, { populate: ['store'] });
}

/**
 * Whether the member may act in the store as far as two-factor sign-in goes: always, unless the
 * owner requires it (`requireTwoFactor`) and the member's account has it off.
 */
export function meetsTwoFactorPolicy(member: StoreMember, user: { totpEnabledAt?: Date | null | undefined }): boolean {
  const store = member.store.getEntity();
  return !store.requireTwoFactor || (user.totpEnabledAt !== null && user.totpEnabledAt !== undefined);
}
