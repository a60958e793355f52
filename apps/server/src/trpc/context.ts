/**
 * The request context, resolved once per request into plain data: the credentials the request
 * presents, the client's address, user agent, origin and trusted-proxy country, plus the clock,
 * a forked EntityManager and a ResponseSink for the headers and cookies its answer should carry.
 * Services take `(ctx, input)` and never see the request or the reply; this file is the only
 * place that reads them (for procedures and plain routes alike).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.js';
import type { Clock } from '../lib/clock.js';
import { newResponseSink, type ResponseSink } from '../lib/cookies.js';
import type { Logger } from '../lib/logger.js';
import { viaTrustedProxy } from '../lib/trust-proxy.js';
import type { IdempotentCall } from '../modules/idempotency/idempotency.service.js';
import type { RouteCall } from './guards.js';
import { CHECKOUT_COOKIE, parseCheckoutCookie, type CheckoutCookie } from '../modules/orders/checkout-cookie.js';
import { CUSTOMER_COOKIE } from '../modules/customers/customer-cookie.js';
import { SESSION_COOKIE } from '../modules/identity/session-cookie.js';

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

/** What every service gets: the database, the clock and the application's parts. */
export interface ServiceContext {
  deps: AppDeps;
  em: EntityManager;
  clock: Clock;
  /**
   * The request's Idempotency-Key on a route that declares one (the idempotency step sets it):
   * the service doing the work records its result in the work's transaction, or gives a recorded
   * one back (modules/idempotency).
   */
  idempotency?: IdempotentCall;
}

export interface Context extends ServiceContext {
  log: Logger;
  caller: CallerInfo;
  answer: ResponseSink;
  /** The route being called, as far as guards need it (set from the route's policy once it is known). */
  call: RouteCall;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The answer's headers and cookies as the request's context collected them (http/response-sink.ts). */
    svcResponse?: ResponseSink;
  }
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** Reads a request once into plain data. */
export function resolveCaller(deps: AppDeps, req: FastifyRequest): CallerInfo {
  const headers = req.headers;
  const cookies = (req.cookies ?? {}) as Record<string, string | undefined>;
  const { config } = deps;
  return {
    id: String(req.id),
    ip: req.ip,
    userAgent: header(headers['user-agent']),
    origin: header(headers.origin),
    proxyCountry: viaTrustedProxy(config.isTrustedProxy, req) ? header(headers[config.countryHeader]) : undefined,
    credentials: {
      authorization: header(headers.authorization),
      sessionToken: cookies[SESSION_COOKIE] || undefined,
      csrfToken: header(headers['x-csrf-token']),
      customerToken: cookies[CUSTOMER_COOKIE] || undefined,
      checkout: parseCheckoutCookie(cookies[CHECKOUT_COOKIE]),
      idempotencyKey: headers['idempotency-key'],
    },
  };
}

/** A request's context; its ResponseSink is handed to the reply when the answer is sent. */
export function createContext(deps: AppDeps, req: FastifyRequest): Context {
  const response = req.svcResponse ?? newResponseSink();
  req.svcResponse = response;
  let em: EntityManager | undefined;
  return {
    deps,
    // Forked when first used: a fork builds a unit of work, an identity map and three loaders,
    // 5 % of a License API validation, which reads through a prepared statement and needs none.
    // A middleware that extends the context copies it (and so forks); the copy keeps this fork.
    get em() {
      return (em ??= deps.orm.em.fork() as EntityManager);
    },
    clock: deps.clock,
    log: req.log,
    caller: resolveCaller(deps, req),
    answer: response,
    // The strictest until the route is known: an unsafe call whose session needs the CSRF token.
    call: { unsafe: true, csrf: 'required' },
  };
}

/** For the tRPC and REST adapters, which hand over `{ req, res }`. */
export function contextFactory(deps: AppDeps) {
  return ({ req }: { req: FastifyRequest }): Context => createContext(deps, req);
}
