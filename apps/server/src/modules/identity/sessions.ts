/**
 * Dashboard sessions: a random token in the `svc_session` cookie, its SHA-256 as the row
 * id, a CSRF token beside it, and a 30-day expiry that slides while the session is used.
 */
import { randomToken, sha256Hex } from '../../lib/crypto.js';
import type { ServiceContext } from '../request/context.js';
import { SessionSchema, type Session, type User } from './identity.entities.js';
import { SESSION_TTL_MS } from './session-cookie.js';

/** Extend at most once a day, so an active session does not write on every request. */
const SLIDE_AFTER_MS = 24 * 3600_000;

export interface IssuedSession {
  token: string;
  csrfToken: string;
}

export async function createSession(ctx: ServiceContext, user: User): Promise<IssuedSession> {
  const { em, clock } = ctx;
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

export async function resolveSession(
  ctx: Pick<ServiceContext, 'em' | 'clock'>,
  token: string,
): Promise<ResolvedSession | null> {
  const { em, clock } = ctx;
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

export async function deleteSession(ctx: ServiceContext, token: string): Promise<void> {
  await ctx.em.nativeDelete(SessionSchema, { idHash: sha256Hex(token) });
}

export async function deleteSessionsOf(ctx: ServiceContext, userId: string): Promise<void> {
  await ctx.em.nativeDelete(SessionSchema, { user: userId });
}
