/** The account as its outputs show it. */
import type { TUser } from '@svc/schemas';
import type { User } from './identity.entities.js';

export function toUserView(user: User): TUser {
  return { id: user.id, email: user.email, name: user.name ?? null, createdAt: user.createdAt.toISOString() };
}
