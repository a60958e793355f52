/** Whether a store refuses a buyer, by e-mail, IP or country. */
import { isIP } from 'node:net';
import { ZEmail, type TBlacklistEntry, type TClientGate, type TCreateBlacklistEntryInput } from '@svc/schemas';
import { AppError, invalidField } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { findSellingStore } from '../stores/selling-store.js';
import { BLACKLIST_KINDS, BlacklistEntrySchema, type BlacklistEntry } from './blacklist.entities.js';
import { matchingKinds } from './blacklist.repo.js';

export interface BuyerIdentity {
  email?: string | undefined;
  ip: string;
  country: string;
}

export type BlacklistReason = 'email' | 'ip' | 'country';

/** The kinds of the store's blacklist that match this buyer (empty: allowed). */
export async function blacklistMatches(
  ctx: ServiceContext,
  storeId: string,
  livemode: boolean,
  buyer: BuyerIdentity,
): Promise<BlacklistReason[]> {
  const candidates = [
    { kind: 'ip' as const, value: buyer.ip },
    { kind: 'country' as const, value: buyer.country.toUpperCase() },
    ...(buyer.email ? [{ kind: 'email' as const, value: buyer.email.toLowerCase() }] : []),
  ];
  return matchingKinds(ctx.em, storeId, livemode, candidates);
}

// ---------------------------------------------------------------------------------------------
// The seller's list, and the public gate a theme asks before showing checkout.

const COUNTRY = /^[A-Za-z]{2}$/;

function invalidValue(message: string): AppError {
  return invalidField('value', message);
}

/**
 * The value as stored and matched: e-mails trimmed and lower-cased, countries upper-cased,
 * IP addresses as given (IPv6 lower-cased, as Node reports client addresses); 400 otherwise.
 */
export function normaliseBlacklistValue(kind: BlacklistReason, raw: string): string {
  const value = raw.trim();
  switch (kind) {
    case 'email': {
      const parsed = ZEmail.safeParse(value);
      if (!parsed.success) throw invalidValue('Not an e-mail address.');
      return parsed.data;
    }
    case 'ip': {
      const version = isIP(value);
      if (version === 0) throw invalidValue('Not an IPv4 or IPv6 address.');
      return version === 6 ? value.toLowerCase() : value;
    }
    case 'country':
      if (!COUNTRY.test(value)) throw invalidValue('Not a two-letter country code.');
      return value.toUpperCase();
  }
}

export function toBlacklistEntryView(entry: BlacklistEntry): TBlacklistEntry {
  return {
    id: entry.id,
    storeId: entry.store.id,
    livemode: entry.livemode,
    kind: entry.kind,
    value: entry.value,
    note: entry.note,
    createdAt: entry.createdAt.toISOString(),
  };
}

const ALREADY_LISTED = 'This value is already on the blacklist.';

export async function addBlacklistEntry(
  ctx: ServiceContext,
  input: TCreateBlacklistEntryInput,
): Promise<TBlacklistEntry> {
  const value = normaliseBlacklistValue(input.kind, input.value);
  if (
    await ctx.em.count(BlacklistEntrySchema, { store: input.storeId, livemode: ctx.livemode, kind: input.kind, value })
  ) {
    throw new AppError('conflict', ALREADY_LISTED);
  }
  const entry = ctx.em.create(BlacklistEntrySchema, {
    id: newId(),
    store: input.storeId,
    livemode: ctx.livemode,
    kind: input.kind,
    value,
    note: input.note ?? '',
    createdAt: ctx.clock.now(),
  });
  try {
    await ctx.em.flush();
  } catch (error) {
    // A racing add of the same value loses at the (store, livemode, kind, value) constraint.
    if ((error as { name?: unknown } | null)?.name === 'UniqueConstraintViolationException') {
      throw new AppError('conflict', ALREADY_LISTED, { cause: error });
    }
    throw error;
  }
  return toBlacklistEntryView(entry);
}

export async function listBlacklist(ctx: ServiceContext, input: { storeId: string }): Promise<TBlacklistEntry[]> {
  const entries = await ctx.em.find(
    BlacklistEntrySchema,
    { store: input.storeId, livemode: ctx.livemode },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return entries.map(toBlacklistEntryView);
}

export async function removeBlacklistEntry(
  ctx: ServiceContext,
  input: { storeId: string; entryId: string },
): Promise<void> {
  const deleted = await ctx.em.nativeDelete(BlacklistEntrySchema, {
    id: input.entryId,
    store: input.storeId,
    livemode: ctx.livemode,
  });
  if (deleted === 0) throw new AppError('not_found', 'Blacklist entry not found.');
}

/** Whether the store takes orders from this buyer: their e-mail (if given), IP and country. */
export async function clientGate(
  ctx: ServiceContext,
  input: { storeId: string; email?: string | undefined },
  client: { ip: string; country: string },
): Promise<TClientGate> {
  const store = await findSellingStore(ctx, input.storeId);
  // The storefront's gate asks for live buyers (a test checkout is checked against the test list).
  const matched = await blacklistMatches(ctx, store.id, ctx.livemode, {
    email: input.email,
    ip: client.ip,
    country: client.country,
  });
  const reasons = BLACKLIST_KINDS.filter((kind) => matched.includes(kind));
  return { allowed: reasons.length === 0, reasons };
}
