/**
 * A store's own origins, from which themes may call the customer routes:
 * `https://<subdomain>.<STOREFRONT_BASE_DOMAIN>` and the seller's `allowedOrigins`.
 */
import type { ServiceContext } from '../request/context.js';
import type { Config } from '../../config.js';
import { StoreSchema, type Store } from './stores.entities.js';
import { anyStoreAllows } from './stores.repo.js';

export function storeOrigins(config: Config, store: Store): string[] {
  const origins = [...store.allowedOrigins];
  if (config.storefrontBaseDomain) origins.push(`https://${store.subdomain}.${config.storefrontBaseDomain}`);
  return origins;
}

/**
 * A theme's address the buyer may be sent back to after a checkout: an http(s) URL on one of the
 * store's own origins (storeOrigins), normalised; undefined for anything else, so a link built
 * from it never leads off the store's sites.
 */
export function storeReturnUrl(config: Config, store: Store, raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 2048) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password) return undefined;
  return storeOrigins(config, store).includes(url.origin) ? url.href : undefined;
}

export function ownOrigin(config: Config): string {
  return new URL(config.publicUrl).origin;
}

/** Whether any store that is not banned claims this origin (answers CORS preflights, which carry no cookie). */
export async function isAnyStoreOrigin(ctx: Pick<ServiceContext, 'em' | 'deps'>, origin: string): Promise<boolean> {
  const { em } = ctx;
  const base = ctx.deps.config.storefrontBaseDomain;
  if (base) {
    const match = new RegExp(`^https://([a-z0-9-]{3,63})\\.${base.replace(/[.]/g, '\\.')}$`).exec(origin);
    if (match && (await em.count(StoreSchema, { subdomain: match[1]!, banned: false })) > 0) return true;
  }
  return anyStoreAllows(em, origin);
}
