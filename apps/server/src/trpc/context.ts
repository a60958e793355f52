/**
 * The request, read once into the context services take (modules/request/context.ts holds its
 * shape): the credentials the request presents, the client's address, user agent, origin and
 * trusted-proxy country, plus the clock, a forked EntityManager and a ResponseSink for the
 * headers and cookies its answer should carry. This file is the only place that reads the
 * request (for procedures and plain routes alike); services never see it or the reply.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.js';
import { newResponseSink, type ResponseSink } from '../lib/cookies.js';
import { viaTrustedProxy } from '../lib/trust-proxy.js';
import { CHECKOUT_COOKIE, parseCheckoutCookie } from '../modules/orders/checkout-cookie.js';
import { CUSTOMER_COOKIE } from '../modules/customers/customer-cookie.js';
import { SESSION_COOKIE } from '../modules/identity/session-cookie.js';
import { PREVIEW_COOKIE } from '../modules/stores/preview-token.js';
import type { CallerInfo, Context } from '../modules/request/context.js';
import type { StoreCredential } from './policy.js';

/**
 * The context procedures get: the request's, and on REST the credential the route's path is
 * bound to, where a route reads one of two (a `storeAccess` route: its merchant path the key,
 * its dashboard path the session). Unset on /trpc, which takes either.
 */
export interface ApiContext extends Context {
  boundCredential: StoreCredential | undefined;
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
      mode: header(headers['x-svc-mode']),
      preview: cookies[PREVIEW_COOKIE] || undefined,
    },
  };
}

/**
 * A request's context; its ResponseSink is handed to the reply when the answer is sent. REST
 * passes the credential its route's path reads, when the route takes either (ApiContext).
 */
export function createContext(
  deps: AppDeps,
  req: FastifyRequest,
  boundCredential: StoreCredential | undefined = undefined,
): ApiContext {
  const response = req.svcResponse ?? newResponseSink();
  req.svcResponse = response;
  let em: EntityManager | undefined;
  return {
    deps,
    // Forked when first used: a fork builds a unit of work, an identity map and three loaders,
    // 5 % of a License API validation, which reads through a prepared statement and needs none.
    // A middleware that extends the context copies it (and so forks); the copy keeps this fork.
    get em() {
      return (em ??= deps.orm.em.fork());
    },
    clock: deps.clock,
    // Live until the route's guard reads the caller's mode (trpc/procedures.ts).
    livemode: true,
    log: req.log,
    caller: resolveCaller(deps, req),
    answer: response,
    // The strictest until the route is known: an unsafe call whose session needs the CSRF token.
    call: { unsafe: true, csrf: 'required' },
    boundCredential,
  };
}

/** For the tRPC and REST adapters, which hand over `{ req, res }`. */
export function contextFactory(deps: AppDeps) {
  return ({ req }: { req: FastifyRequest }): ApiContext => createContext(deps, req);
}
