/**
 * JSON bodies for an encapsulated context: only application/json is accepted (anything
 * else is 415), the raw bytes are kept on `request.rawBody` for signature checks, JSON nested
 * too deep or with too long an array is 400 `validation_failed` before it is parsed, invalid
 * JSON is 400 `invalid_json` in our body, and an empty body is no body (`request.emptyJsonBody`:
 * the REST routes that take a body refuse it).
 */
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError, invalidField } from '../lib/errors.js';
import { jsonShapeProblem } from '../lib/input-limits.js';

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
    /** The client sent an empty body as application/json. */
    emptyJsonBody?: boolean;
  }
}

function isBlank(body: Buffer): boolean {
  for (const byte of body) {
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return false;
  }
  return true;
}

export function useJsonBodies(instance: FastifyInstance, bodyLimit: number): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    const raw = body as Buffer;
    request.rawBody = raw;
    if (isBlank(raw)) {
      request.emptyJsonBody = true;
      return done(null, undefined);
    }
    const problem = jsonShapeProblem(raw);
    if (problem) return done(invalidField('', problem), undefined);
    try {
      done(null, secureJson.parse(raw, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new AppError('invalid_json'), undefined);
    }
  });
}
