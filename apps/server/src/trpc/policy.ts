/**
 * What a route's declaration says about who may call it and how: the one vocabulary of the
 * route table. A procedure's meta (and a plain route's declaration) carries a RoutePolicy;
 * the guards enforce it, /trpc and REST CORS and CSRF follow it, the OpenAPI document and the
 * SDK generator describe it. Nothing decides policy from a URL.
 */
import type { TApiKeyScope, TErrorCode, TStorePermission } from '@svc/schemas';
import type { RateLimitRule } from '../lib/rate-limit.js';
import type { CsrfPolicy } from '../modules/request/context.js';

/** Who may call a route, and with which credential. */
export type AuthSurface =
  /** No credential. `audience` says who calls it: storefronts and buyers (themes, the SDK), or sellers signing in. */
  | { kind: 'public'; audience: 'storefront' | 'seller' }
  /** A signed-in seller (svc_session). With `store`, a member of the input's `storeId` holding `permission` (or its owner). */
  | { kind: 'session'; store?: { permission?: TStorePermission; ownerOnly?: boolean } }
  /** A merchant API key (Bearer) with `scope`, reaching the input's `storeId`, within its owner's ceiling (SCOPE_CEILING). */
  | { kind: 'apiKey'; scope: TApiKeyScope }
  /**
   * A store operation both audiences call, declared once: a merchant key with `scope` (as
   * `apiKey`), or a member's session holding `permission` (as `session` with `store`; membership
   * alone when absent), CSRF on its unsafe calls. REST serves it at two paths, each bound to one
   * credential: `openapi.path`, the merchant's (`/merchant/v1/stores/{storeId}/...`, the key),
   * and the same path under `/dashboard/stores/{storeId}` (the session). /trpc takes either.
   */
  | { kind: 'storeAccess'; scope: TApiKeyScope; permission?: TStorePermission }
  /** A buyer signed in to one store's customer area (svc_customer). */
  | { kind: 'customer' }
  /**
   * A buyer holding an order: its checkout token (input or svc_checkout), its e-mail, a customer
   * session of it, and, with `staffSession`, a staff session with viewOrders. Which one opens
   * which order is the service's rule (delivery, tickets); the route says which are read.
   */
  | { kind: 'buyer'; staffSession: boolean }
  /** A payment gateway, authenticated by its signature over the raw body. */
  | { kind: 'signature' }
  /** The operator's scraper: `Authorization: Bearer <METRICS_TOKEN>` when that is configured (guards.ts). */
  | { kind: 'operator' };

/**
 * `open`: any origin, without credentials (public theme routes, the embed). `store-origins`:
 * the origins a store claims, with credentials (customer routes themes call). `none`: same
 * origin only (dashboard, merchant API, seller sign-in).
 */
export type CorsPolicy = 'none' | 'open' | 'store-origins';

/** The credential a `storeAccess` route reads on one of its REST paths: the key (merchant path) or the session (dashboard path). */
export type StoreCredential = 'apiKey' | 'session';

export interface RoutePolicy {
  auth: AuthSurface;
  csrf: CsrfPolicy;
  cors: CorsPolicy;
  /** Budget per client (IP) on this route; merchant routes also spend the per-key budget. */
  rateLimit?: RateLimitRule | undefined;
  /** Honours Idempotency-Key, scoped to the store the input names in this field. */
  idempotency?: { storeField: string } | undefined;
  /** Success status when not 200 (201 create, 202 accepted for a background job, 204 delete). */
  successStatus?: 201 | 202 | 204 | undefined;
  /**
   * The route's own error codes (domain rules). The table adds what follows from the rest of the
   * policy: validation, credentials, CSRF, limits, idempotency, and the internal errors.
   */
  errors: TErrorCode[];
  /**
   * A `storeAccess` route's dashboard path: its tags in the OpenAPI document. The path is the
   * merchant path's under `/dashboard/stores/{storeId}`, its operationId
   * `<namespace>-dashboard<Name>` (`orders-dashboardGet` for `orders.get`).
   */
  dashboard?: { tags: string[] } | undefined;
  /**
   * A GET whose answer is also offered as CSV (a report): its input takes `format` (`json`, the
   * default, or `csv`), and REST answers `format=csv` with `render(output)` as `text/csv`, an
   * attachment named `filename(output)`. The output is the procedure's, checked by its schema
   * first; /trpc answers JSON whatever the format. A query parameter rather than the Accept header:
   * a link, a curl line and a cache key all carry it, and the document lists it with its values.
   */
  csv?: CsvAnswer | undefined;
}

/** How a route's output reads as CSV (RoutePolicy.csv). `never`: each route's own output type is accepted. */
export interface CsvAnswer {
  render: (output: never) => string;
  filename: (output: never) => string;
}
