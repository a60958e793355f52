/**
 * The one way to declare a route that is not a procedure (raw-byte payment notifications,
 * multipart uploads, binary downloads, pages, ops, docs): one object states its method and path,
 * its policy (guard, CSRF, CORS, limit, error codes) and its OpenAPI operation, and the handler.
 * The route table reads the same object, so API routes declared here are in the OpenAPI document
 * (and so in the sweeps), CORS follows their policy, and the guard and limit run exactly as for
 * a procedure: the request's context is resolved once, the guard reads only that, failures
 * answer our error body (or the route's own page).
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { AppDeps } from '../deps.js';
import { AppError, logUnshown, toPublicError, zodIssues, type PublicError } from '../lib/errors.js';
import { assertReadable } from '../lib/input-limits.js';
import type { User } from '../modules/identity/identity.entities.js';
import type { StoreMember } from '../modules/stores/stores.entities.js';
import {
  authenticateOperator,
  authenticateSession,
  authorizeMerchant,
  dashboardLivemode,
  requireMember,
  storeIdOf,
} from '../modules/access/guards.js';
import type { Context } from '../modules/request/context.js';
import { enforceRateLimit } from '../modules/request/rate-limit.js';
import { createContext } from '../trpc/context.js';
import type { PlainRouteDeclaration } from '../api/route-table.js';
import { authenticateCustomer } from '../modules/customers/customer-session.js';
import { bearerChallenge, sendError } from './error-reply.js';

/** How a route's body is read: not at all, as raw bytes (signatures), multipart (one file), or an HTML form. */
export type BodyKind = 'none' | 'raw' | 'multipart' | 'form';

export interface PlainContext extends Context {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  /** The signed-in seller and membership, on session routes. */
  user?: User;
  member?: StoreMember;
}

export interface PlainRoute extends PlainRouteDeclaration {
  body: BodyKind;
  /** Registered only when this says so (the mailbox outside production, ...). */
  enabled?: (config: Config) => boolean;
  handler(ctx: PlainContext, request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  /** Turns what a body parser or the handler threw into our error (multipart's own errors). */
  mapError?: (error: unknown) => unknown;
  /** Pages answer a failure with a page of their own instead of our JSON body. */
  renderError?: (reply: FastifyReply, error: PublicError, request: FastifyRequest) => FastifyReply;
}

export function plainRoute(route: PlainRoute): PlainRoute {
  return route;
}

const UNSAFE = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** The route's guard, as procedures apply it (modules/access/guards.ts), on the route's path parameters. */
async function guard(route: PlainRoute, ctx: PlainContext): Promise<void> {
  const { auth } = route.policy;
  switch (auth.kind) {
    case 'session': {
      const { user } = await authenticateSession(ctx, ctx.call);
      ctx.user = user;
      // The dashboard's mode (X-Svc-Mode) is the call's (test mode: docs/architecture.md).
      ctx.livemode = dashboardLivemode(ctx);
      if (auth.store)
        ctx.member = await requireMember(ctx, user, storeIdOf(ctx.params), auth.store.permission, auth.store.ownerOnly);
      return;
    }
    case 'apiKey':
      // The key's mode is the call's (test mode: docs/architecture.md).
      ctx.livemode = (await authorizeMerchant(ctx, auth.scope, ctx.params)).credential.livemode;
      return;
    case 'customer':
      await authenticateCustomer(ctx);
      return;
    case 'operator':
      authenticateOperator(ctx);
      return;
    case 'public':
    case 'buyer':
    case 'signature':
      // Public, or decided by the handler from the credentials the context holds.
      return;
  }
}

function bodyScope(kind: BodyKind, deps: AppDeps) {
  return async (scope: FastifyInstance) => {
    if (kind === 'raw') {
      // The signature covers exactly these bytes: nothing is parsed before it is verified.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) =>
        done(null, body),
      );
    } else if (kind === 'multipart') {
      // One file per request; the storage adapter enforces the byte limit while streaming.
      await scope.register(multipart, {
        limits: { files: 1, fields: 0, parts: 1, fileSize: deps.config.fileMaxBytes + 1 },
      });
    } else if (kind === 'form') {
      scope.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: 4096 },
        (_request, body, done) => {
          done(null, Object.fromEntries(new URLSearchParams(body as string)));
        },
      );
    }
  };
}

/** Registers the enabled routes, each body kind in a scope of its own (parsers are per scope). */
export async function registerPlainRoutes(
  app: FastifyInstance,
  deps: AppDeps,
  routes: readonly PlainRoute[],
): Promise<void> {
  const enabled = routes.filter((route) => route.enabled?.(deps.config) ?? true);
  for (const kind of ['none', 'raw', 'multipart', 'form'] as const) {
    const ofKind = enabled.filter((route) => route.body === kind);
    if (ofKind.length === 0) continue;
    await app.register(async (scope) => {
      await bodyScope(kind, deps)(scope);
      for (const route of ofKind) {
        scope.route({
          method: route.method,
          url: route.path.replace(/\{(\w+)\}/g, ':$1'),
          handler: async (request, reply) => {
            const ctx: PlainContext = Object.assign(createContext(deps, request), {
              params: request.params as Record<string, string>,
              query: request.query as Record<string, string | undefined>,
              call: { unsafe: UNSAFE.has(route.method), csrf: route.policy.csrf },
            });
            try {
              if (route.policy.rateLimit) await enforceRateLimit(ctx, route.policy.rateLimit);
              assertReadable(ctx.params);
              assertReadable(ctx.query);
              if (route.body === 'form') assertReadable(request.body);
              await guard(route, ctx);
              if (route.query) {
                const parsed = route.query.safeParse(request.query ?? {});
                if (!parsed.success)
                  throw new AppError('validation_failed', undefined, { issues: zodIssues(parsed.error) });
                ctx.query = parsed.data as Record<string, string | undefined>;
              }
              return await route.handler(ctx, request, reply);
            } catch (error) {
              const pub = toPublicError(route.mapError?.(error) ?? error);
              logUnshown(request.log, error, pub, { route: route.name }, 'route failed');
              const challenge = bearerChallenge(route.policy, pub, request.headers.authorization);
              if (challenge) reply.header('WWW-Authenticate', challenge);
              return route.renderError ? route.renderError(reply, pub, request) : sendError(reply, pub);
            }
          },
        });
      }
    });
  }
}
