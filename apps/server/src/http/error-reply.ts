/** Writes our error body for errors that happen outside tRPC (parsers, 404s, fastify itself). */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { TErrorBody } from '@svc/schemas';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, invalidField, logUnshown, toPublicError, type PublicError } from '../lib/errors.js';
import type { RoutePolicy } from '../trpc/policy.js';

/**
 * The challenge a 401 carries on a route whose credential is a Bearer token (merchant keys, the
 * operator's metrics token), RFC 6750 §3: `error="invalid_token"` when a token was sent and refused.
 * Set here, by the transport, from the route's policy: the guards only say "unauthorized".
 */
export function bearerChallenge(
  policy: RoutePolicy,
  pub: PublicError,
  authorization: string | undefined,
): string | undefined {
  if (pub.status !== 401 || (policy.auth.kind !== 'apiKey' && policy.auth.kind !== 'operator')) return undefined;
  return authorization === undefined ? 'Bearer realm="svc"' : 'Bearer realm="svc", error="invalid_token"';
}

/** Our error body with the error's status; a route documented with a bare body (`{ error }`) gets that. */
export function sendError(reply: FastifyReply, pub: PublicError): FastifyReply {
  const type = reply.code(pub.status).type('application/json; charset=utf-8');
  if (pub.bare) return type.send({ error: pub.message });
  const body: TErrorBody = { error: pub.message, code: pub.code };
  if (pub.issues) body.issues = pub.issues;
  return type.send(body);
}

function fromFastifyError(error: FastifyError): PublicError {
  if (error instanceof AppError) return toPublicError(error);
  switch (error.statusCode) {
    case 413:
      return toPublicError(new AppError('payload_too_large'));
    case 415:
      return toPublicError(new AppError('unsupported_media_type'));
    case 400:
      return toPublicError(new AppError(error.code?.startsWith('FST_ERR_CTP') ? 'invalid_json' : 'validation_failed'));
    default:
      return toPublicError(error);
  }
}

/** The most of a refused body that is still read (and dropped) after its 413. */
const DRAIN_REFUSED_BODY_BYTES = 16 * 1024 * 1024;

/**
 * A body over the limit is refused before it is read, and fastify closes the connection after the
 * answer. Closed while the client is still sending, the socket is reset, and the reset often
 * reaches the client before the answer does: it sees "connection reset", not our 413. A body of
 * a declared length up to DRAIN_REFUSED_BODY_BYTES is read to its end and dropped instead (Node
 * does that for a kept-alive connection), so the client finishes sending and reads the 413.
 */
function drainRefusedBody(request: FastifyRequest, reply: FastifyReply): void {
  if (reply.getHeader('connection') !== 'close') return;
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared <= DRAIN_REFUSED_BODY_BYTES) reply.removeHeader('connection');
}

export function installErrorReplies(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const pub = fromFastifyError(error);
    logUnshown(request.log, error, pub, {}, 'request failed');
    if (pub.status === 413) drainRefusedBody(request, reply);
    return sendError(reply, pub);
  });
  app.setNotFoundHandler((request, reply) => {
    // A preflight the route's CORS policy refuses (http/cors.ts): answered, without CORS headers,
    // so the browser refuses the call itself; a 404 would read as "no such route".
    if (request.method === 'OPTIONS' && request.headers.origin && request.headers['access-control-request-method'])
      return reply.code(204).send();
    return sendError(reply, toPublicError(new AppError('not_found')));
  });
}

/**
 * Errors Node's HTTP parser raises before there is a request (fastify's `clientErrorHandler`):
 * a request line or headers over Node's 16 KB limit (a long query string), or bytes that are
 * not HTTP. Fastify's default answers those in its own body; ours says the same in our shape.
 * Timeouts keep fastify's answer (no code of ours means "too slow").
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let status: number;
  let body: string;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = '{"error":"Request Timeout","message":"Client Timeout","statusCode":408}';
  } else if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 413;
    body = JSON.stringify({
      error: 'The request line and headers are too large.',
      code: 'payload_too_large',
    } satisfies TErrorBody);
  } else {
    status = 400;
    body = JSON.stringify({ error: 'The request is not valid HTTP.', code: 'validation_failed' } satisfies TErrorBody);
  }
  this.log.trace({ err: error }, 'client error');
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * Requests the router refuses before any route or hook runs (fastify's `frameworkErrors`): a path
 * that is not valid percent-encoded UTF-8 (`%ff`), a path parameter over the router's length limit.
 * Fastify's default answers those in its own body (code FST_ERR_BAD_URL); ours is a 400.
 */
export function routerErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'A path segment is too long.'
      : 'The URL is not valid percent-encoded UTF-8.';
  request.log.trace({ err: error }, 'router refused the URL');
  sendError(reply, toPublicError(invalidField('', message)));
}
