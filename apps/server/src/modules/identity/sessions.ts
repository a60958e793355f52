/**
 * Dashboard sessions: a random token in the `svc_session` cookie, its SHA-256 as the row
 * id, a CSRF token beside it, and a 30-day expiry that slides while the session is used.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../../lib/clock.js';
import { randomToken, sha256Hex } from '../../lib/crypto.js';
import { SessionSchema, type Session, type User } from './identity.entities.js';
import { SESSION_TTL_MS } from './session-cookie.js';

/** Extend at most once a day, so an active session does not write on every request. */
const SLIDE_AFTER_MS = 24 * 3600_000;

export interface IssuedSession {
  token: string;
  csrfToken: string;
}

export async function createSession(em: EntityManager, clock: Clock, user: User): Promise<IssuedSession> {
  const token = randomToken(32);
  const csrfToken = randomToken(32);
  const now = clock.now();
  em.create(SessionSchema, {
    idHash: sha256Hex(token),
    user,
    csrfToken,
    createdAt: now,
    expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
  });
  await em.flush();
  return { token, csrfToken };
}

export interface ResolvedSession {
  session: Session;
  user: User;
  /** True when the expiry moved: the cookie should be sent again with the new lifetime. */
  slid: boolean;
}

export async function resolveSession(em: EntityManager, clock: Clock, token: string): Promise<ResolvedSession | null> {
  const session = await em.findOne(SessionSchema, { idHash: sha256Hex(token) }, { populate: ['user'] });
  const now = clock.now().getTime();
  if (!session) return null;
  if (session.expiresAt.getTime() <= now) {
    await em.nativeDelete(SessionSchema, { idHash: session.idHash });
    return null;
  }
  let slid = false;
  if (session.expiresAt.getTime() - now < SESSION_TTL_MS - SLIDE_AFTER_MS) {
    session.expiresAt = new Date(now + SESSION_TTL_MS);
    await em.flush();
    slid = true;
  }
  return { session, user: session.user.getEntity(), slid };
}

export async function deleteSession(em: EntityManager, token: string): Promise<void> {
  await em.nativeDelete(SessionSchema, { idHash: sha256Hex(token) });
}

export async function deleteSessionsOf(em: EntityManager, userId: string): Promise<void> {
  await em.nativeDelete(SessionSchema, { user: userId });
}
