/** Writes our error body for errors that happen outside tRPC (parsers, 404s, fastify itself). */
import type { TErrorBody } from '@svc/schemas';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, toPublicError, type PublicError } from '../lib/errors.js';

export function sendError(reply: FastifyReply, pub: PublicError): FastifyReply {
  const body: TErrorBody = { error: pub.message, code: pub.code };
  if (pub.issues) body.issues = pub.issues;
  return reply.code(pub.status).type('application/json; charset=utf-8').send(body);
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

export function installErrorReplies(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const pub = fromFastifyError(error);
    if (pub.internal) request.log.error({ err: error }, 'request failed');
    return sendError(reply, pub);
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, toPublicError(new AppError('not_found'))));
}
