/**
 * REST: every procedure of the route table served at its documented path under /api, as one
 * Fastify route each (a storeAccess procedure at its two, each reading only the credential the
 * table binds it to: the merchant path the key, the dashboard path the session). The handler
 * reads the input (a GET's or DELETE's query, any other method's JSON body, plus the path's
 * parameters), calls the procedure with the request's context through invokeProcedure (the same
 * middleware chain /trpc runs: errors, rate limit, readable input, idempotency, the builder's
 * guard, the input and output schemas) and answers with the route's success status, or with our
 * error body; a route whose policy offers CSV answers `format=csv` with its output as CSV.
 * trpc-to-openapi builds the OpenAPI document from the same procedures (openapi/document.ts); its runtime adapter is not used: it made a URL, an AbortController with
 * an undici Request and a tRPC caller for every request, and found the route by trying each
 * path's regular expression in turn.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.js';
import { AppError, invalidField, logUnshown } from '../lib/errors.js';
import { publicError } from '../trpc/errors.js';
import { createContext } from '../trpc/context.js';
import { invokeProcedure } from '../api/invoke.js';
import type { RouteEntry, RouteTable } from '../api/route-table.js';
import { bearerChallenge, sendError } from './error-reply.js';
import { useJsonBodies } from './json-body.js';

/** A REST route reads its input from the query on these methods, from the JSON body on the others. */
const QUERY_INPUT = new Set(['GET', 'DELETE']);

/**
 * A query as the procedure reads it: a key given once is a string, a key repeated is a list (its
 * schema decides whether a list is allowed), an empty value is no value.
 */
function queryInput(query: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const key in query) {
    const value = query[key];
    if (!value) continue;
    input[key] = Array.isArray(value) && value.length === 1 ? value[0] : value;
  }
  return input;
}

/**
 * A JSON body as the procedure reads it. Every REST input is an object: a body that is not one
 * (an array, a string, a number, a boolean, null) is refused, as is an empty body the client sent
 * as JSON on a route that reads one. A path parameter is never a body field: `{ "storeId":
 * <another store> }` in the body of /stores/{storeId}/... is named like any unknown field.
 */
function bodyInput(request: FastifyRequest, entry: RouteEntry, typeAdded: boolean): Record<string, unknown> {
  const body = request.body;
  if (body === undefined) {
    if (request.emptyJsonBody && !typeAdded && entry.jsonBody)
      throw invalidField('', 'The body is empty: send a JSON object.');
    return {};
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw invalidField('', 'The body must be a JSON object.');
  }
  const clashes = entry.params.filter((name) => Object.hasOwn(body, name));
  if (clashes.length > 0) {
    throw new AppError('validation_failed', undefined, {
      issues: clashes.map((name) => ({ path: name, message: 'Unknown field.' })),
    });
  }
  return body as Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The REST adapter supplied the Content-Type of a bodyless unsafe request. */
    restTypeAdded?: boolean;
  }
}

function restHandler(deps: AppDeps, entry: RouteEntry) {
  const procedure = entry.procedure!;
  const fromQuery = QUERY_INPUT.has(entry.method);
  const status = entry.policy.successStatus ?? 200;
  const type = entry.type!;
  const path = entry.name;

  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    try {
      if (!fromQuery) {
        const contentType = request.headers['content-type'];
        if (!contentType?.startsWith('application/json')) throw new AppError('unsupported_media_type');
      }
      // A DELETE reads its input from the query, but a body it carries is checked all the same.
      const body = request.method === 'GET' ? undefined : bodyInput(request, entry, request.restTypeAdded === true);
      const given = fromQuery ? queryInput(request.query as Record<string, string | string[] | undefined>) : body!;
      const input = Object.assign(given, request.params as Record<string, string>);
      // A storeAccess route reads, on this path, only the credential the path is bound to.
      const ctx = createContext(deps, request, entry.credential);
      const data = await invokeProcedure(procedure, {
        ctx,
        path,
        type,
        getRawInput: () => Promise.resolve(input),
        signal: undefined,
        batchIndex: 0,
      });
      // A report asked for as CSV (the route's policy says how its output reads as CSV).
      if (entry.policy.csv && given.format === 'csv') {
        const csv = entry.policy.csv as { render: (output: unknown) => string; filename: (output: unknown) => string };
        return reply
          .code(status)
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(csv.filename(data))}`)
          .send(csv.render(data));
      }
      reply.code(status).type('application/json');
      return data === undefined ? reply.send() : reply.send(JSON.stringify(data));
    } catch (error) {
      const pub = publicError(error);
      // Failures inside the procedure were logged by its request step (requestSteps), once.
      // A failure inside the procedure was logged by its request step (requestSteps), once: it arrives as ours.
      logUnshown(request.log, error, pub, { path }, 'request failed');
      const challenge = bearerChallenge(entry.policy, pub, request.headers.authorization);
      if (challenge) reply.header('WWW-Authenticate', challenge);
      return sendError(reply, pub);
    }
  };
}

/** `/api/stores/{storeId}` as Fastify writes it: `/api/stores/:storeId`. */
const fastifyPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * The REST routes as a plugin (its own scope: the hook below sees only them). It registers at once,
 * so it is a callback plugin; a throw fails the registration, as it did the async one's.
 */
export function restPlugin(app: FastifyInstance, opts: RestOptions, done: (error?: Error) => void): void {
  try {
    addRestRoutes(app, opts);
  } catch (error) {
    return done(error as Error);
  }
  done();
}

interface RestOptions {
  deps: AppDeps;
  table: RouteTable;
}

function addRestRoutes(app: FastifyInstance, opts: RestOptions): void {
  useJsonBodies(app, opts.deps.config.bodyLimitBytes);
  app.decorateRequest('restTypeAdded', false);

  // A POST without a body (rotate, test, retry) needs no Content-Type: it would otherwise be
  // refused with 415 before anyone looked at the (absent) body.
  app.addHook('onRequest', (request, _reply, done) => {
    const headers = request.headers;
    if (
      request.method !== 'GET' &&
      !headers['content-type'] &&
      !headers['transfer-encoding'] &&
      (headers['content-length'] ?? '0') === '0'
    ) {
      headers['content-type'] = 'application/json';
      request.restTypeAdded = true;
    }
    done();
  });

  for (const entry of opts.table.procedures) {
    app.route({ method: entry.method, url: fastifyPath(entry.path), handler: restHandler(opts.deps, entry) });
  }
}
