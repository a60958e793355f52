/**
 * The request context as services and guards see it: plain data, resolved once per request by
 * the transport's adapter (trpc/context.ts reads the request into it). The credentials the request
 * presents, the client's address, user agent, origin and trusted-proxy country, plus the clock, a
 * forked EntityManager, the request's logger and a ResponseSink for the headers and cookies its
 * answer should carry. Nothing here knows HTTP: services take `(ctx, input)` and never see the
 * transport. A transaction rides on the context (transaction.ts `inTransaction`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppDeps } from '../../deps.js';
import type { Clock } from '../../lib/clock.js';
import type { ResponseSink } from '../../lib/cookies.js';
import type { Logger } from '../../lib/logger.js';
import type { IdempotentCall } from './idempotent-call.js';

/** The order a checkout credential (svc_checkout; its format is orders/checkout-cookie.ts's) opens and its token. */
export interface CheckoutCookie {
  orderId: string;
  token: string;
}

/** What the request presents; each read once, from its one header or cookie. */
export interface Credentials {
  /** The Authorization header as sent (merchant API keys). */
  authorization: string | undefined;
  /** svc_session: a seller's session token. */
  sessionToken: string | undefined;
  /** X-CSRF-Token. */
  csrfToken: string | undefined;
  /** svc_customer: a buyer's customer-area session token. */
  customerToken: string | undefined;
  /** svc_checkout: the order it opens and its token. */
  checkout: CheckoutCookie | undefined;
  /** Idempotency-Key as sent (checked by the idempotency step). */
  idempotencyKey: string | string[] | undefined;
  /** X-Svc-Mode as sent: the dashboard's mode, `live` or `test` (read by the session guards). */
  mode: string | undefined;
  /** svc_preview: the preview token a storefront page was opened with (access/test-mode.ts). */
  preview: string | undefined;
}

export interface CallerInfo {
  id: string;
  /** The client address as fastify resolves it: X-Forwarded-For counts only behind TRUST_PROXY. */
  ip: string;
  userAgent: string | undefined;
  origin: string | undefined;
  /** The trusted proxy's country header (COUNTRY_HEADER); undefined unless the request came through one. */
  proxyCountry: string | undefined;
  credentials: Credentials;
}

/** What every service gets: the database, the clock, a logger and the application's parts. */
export interface ServiceContext {
  deps: AppDeps;
  /** The call's EntityManager: a transaction's inside `inTransaction` (transaction.ts). */
  em: EntityManager;
  clock: Clock;
  /** The request's logger (its id on every line); a job's is the application's. */
  log: Logger;
  /**
   * The mode the call reads and writes (test mode: docs/architecture.md): true for live, false for test.
   * Live unless the caller's credential says test: a merchant key's mode, the dashboard's
   * X-Svc-Mode. Buyer routes take the mode of the objects they act on (a product's, an order's).
   */
  livemode: boolean;
  /**
   * The request's Idempotency-Key on a route that declares one (the idempotency step sets it):
   * the service doing the work records its result in the work's transaction, or gives a recorded
   * one back (modules/idempotency).
   */
  idempotency?: IdempotentCall;
}

/**
 * A plain service context for work no request asks for (scheduled jobs, the metrics): the
 * application's deps, a fresh EntityManager, live mode. One per run, as a request has its own.
 */
export function serviceContext(deps: AppDeps): ServiceContext {
  return { deps, em: deps.orm.em.fork(), clock: deps.clock, log: deps.log, livemode: true };
}

export interface Context extends ServiceContext {
  caller: CallerInfo;
  answer: ResponseSink;
  /** The route being called, as far as guards need it (set from the route's policy once it is known). */
  call: RouteCall;
}

/**
 * `required`: an unsafe call that a seller session (svc_session) authenticates must carry the
 * session's X-CSRF-Token. `exempt`: such a call is accepted without it (documented exemptions
 * only). `none`: the route reads no seller session for unsafe calls (public, Bearer, customer,
 * signed), so there is nothing for a forged cross-site request to ride on.
 */
export type CsrfPolicy = 'required' | 'exempt' | 'none';

/** What the guards need to know of the route being called. */
export interface RouteCall {
  /** Unsafe: a mutation (tRPC) or a POST/PATCH/PUT/DELETE (plain routes). */
  unsafe: boolean;
  csrf: CsrfPolicy;
}
