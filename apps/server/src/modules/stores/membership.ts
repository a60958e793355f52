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

export function findMembership(
  ctx: Pick<ServiceContext, 'em'>,
  storeId: string,
  userId: string,
): Promise<StoreMember | null> {
  return ctx.em.findOne(StoreMemberSchema, { store: storeId, user: userId });
}
