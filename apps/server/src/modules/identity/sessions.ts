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
/** `lastSeenAt` moves at most once an hour: the Account page's "last seen" needs no finer grain. */
const SEEN_EVERY_MS = 3600_000;

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
    lastSeenAt: now,
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
    slid = true;
  }
  const seen = !session.lastSeenAt || now - session.lastSeenAt.getTime() >= SEEN_EVERY_MS;
  if (seen) session.lastSeenAt = new Date(now);
  if (slid || seen) await em.flush();
  return { session, user: session.user.getEntity(), slid };
}

export async function deleteSession(ctx: ServiceContext, token: string): Promise<void> {
  await ctx.em.nativeDelete(SessionSchema, { idHash: sha256Hex(token) });
}

export async function deleteSessionsOf(ctx: ServiceContext, userId: string): Promise<void> {
  await ctx.em.nativeDelete(SessionSchema, { user: userId });
}

/** The user's sessions, newest first, the one of `currentToken` marked. */
export async function listSessionsOf(
  ctx: ServiceContext,
  userId: string,
  currentToken: string,
): Promise<Array<{ id: string; createdAt: Date; lastSeenAt: Date; current: boolean }>> {
  const current = sha256Hex(currentToken);
  const now = ctx.clock.now();
  const rows = await ctx.em.find(
    SessionSchema,
    { user: userId, expiresAt: { $gt: now } },
    { orderBy: { createdAt: 'desc' } },
  );
  return rows.map((row) => ({
    // The row's key is the hash of the cookie's token: a prefix of it names the session in a list,
    // and can neither sign in nor be looked up.
    id: row.idHash.slice(0, 16),
    createdAt: row.createdAt,
    lastSeenAt: row.lastSeenAt ?? row.createdAt,
    current: row.idHash === current,
  }));
}

/** Signs the user's other sessions out; the one of `keepToken` stays. Answers how many ended. */
export async function deleteOtherSessionsOf(ctx: ServiceContext, userId: string, keepToken: string): Promise<number> {
  return ctx.em.nativeDelete(SessionSchema, { user: userId, idHash: { $ne: sha256Hex(keepToken) } });
}
