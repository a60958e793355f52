/** Per-request context: a forked EntityManager, the request id, the client IP and the clock. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';

export interface Context {
  deps: AppDeps;
  em: EntityManager;
  clock: Clock;
  log: Logger;
  requestId: string;
  /** The client address as fastify resolves it: X-Forwarded-For counts only behind TRUST_PROXY. */
  ip: string;
  req: FastifyRequest;
  res: FastifyReply;
}

export function contextFactory(deps: AppDeps) {
  return ({ req, res }: { req: FastifyRequest; res: FastifyReply }): Context => ({
    deps,
    em: deps.orm.em.fork() as EntityManager,
    clock: deps.clock,
    log: req.log,
    requestId: String(req.id),
    ip: req.ip,
    req,
    res,
  });
}
