/** The api-keys module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';

export interface CredentialRow {
  id: string;
  user_id: string;
  key_hash: string;
  mode: 'live' | 'test';
  scopes: string[];
  store_ids: string[];
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  last_used_at: Date | string | null;
  role: 'owner' | 'staff' | null;
  permissions: string[] | null;
}

/**
 * The key with this hash and its owner's membership of the store. Hot path (every merchant
 * request): one statement, a join the entities have no relation for (key owner to membership of
 * one store), no hydration.
 */
export async function selectCredential(
  em: EntityManager,
  keyHash: string,
  storeId: string,
): Promise<CredentialRow | undefined> {
  const [row] = await preparedRows<CredentialRow>(
    em,
    `select k.id, k.user_id, k.key_hash, k.mode, k.scopes, k.store_ids, k.expires_at, k.revoked_at, k.last_used_at, m.role, m.permissions
     from api_key k left join store_member m on m.user_id = k.user_id and m.store_id = ?
     where k.key_hash = ?`,
    [storeId, keyHash],
  );
  return row;
}

/**
 * Whether any key (revoked and expired ones too) reaches the store: the Home's setup checklist.
 * Array containment (`@>`) on the GIN index api_key_store_ids_index, one row at most; the ORM
 * has no containment operator for a text[] column.
 */
export async function anyApiKeyFor(em: EntityManager, storeId: string): Promise<boolean> {
  const rows = await preparedRows(em, 'select 1 from api_key where store_ids @> array[?]::text[] limit 1', [storeId]);
  return rows.length > 0;
}
