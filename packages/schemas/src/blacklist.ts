/** Buyers a store refuses (by e-mail, IP address or country), and the public gate a theme asks. */
import { z } from 'zod';
import { ZEmail, ZId, ZTimestamp, ZLivemode } from './common.js';

export const BLACKLIST_KINDS = ['email', 'ip', 'country'] as const;
export const ZBlacklistKind = z.enum(BLACKLIST_KINDS);
export type TBlacklistKind = z.infer<typeof ZBlacklistKind>;

/** The value is checked and normalised per kind by the server (e-mail, IP address, 2-letter country). */
export const ZCreateBlacklistEntryInput = z.strictObject({
  storeId: ZId,
  kind: ZBlacklistKind,
  value: z.string().trim().min(1).max(320),
  note: z.string().trim().max(200).optional(),
});
export type TCreateBlacklistEntryInput = z.infer<typeof ZCreateBlacklistEntryInput>;

export const ZBlacklistEntryIdInput = z.strictObject({ storeId: ZId, entryId: ZId });

export const ZBlacklistEntry = z.object({
  id: z.string(),
  storeId: z.string(),
  livemode: ZLivemode,
  kind: ZBlacklistKind,
  /** Normalised: e-mails lower-case, countries upper-case. */
  value: z.string(),
  note: z.string(),
  createdAt: ZTimestamp,
});
export type TBlacklistEntry = z.infer<typeof ZBlacklistEntry>;
export const ZBlacklistEntryList = z.object({ entries: z.array(ZBlacklistEntry) });

/** `POST /api/checkout/client-gate`: the IP and country come from the request. */
export const ZClientGateInput = z.strictObject({
  storeId: z.string().min(1).max(63),
  email: ZEmail.optional(),
});

export const ZClientGate = z.object({
  allowed: z.boolean(),
  /** The kinds of the store's blacklist this buyer matches (empty when allowed). */
  reasons: z.array(ZBlacklistKind),
});
export type TClientGate = z.infer<typeof ZClientGate>;
