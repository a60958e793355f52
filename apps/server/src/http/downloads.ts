/** `GET /api/orders/{orderId}/files/{fileId}?expires=&sig=`: a signed, expiring file link from the delivery payload. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';
import { toPublicError } from '../lib/errors.js';
import { fileForLink } from '../modules/fulfilment/delivery.service.js';
import { contextFactory } from '../trpc/context.js';
import { sendError } from './error-reply.js';

export async function downloadsPlugin(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const createContext = contextFactory(opts.deps);
  app.get<{ Params: { orderId: string; fileId: string }; Querystring: { expires?: string; sig?: string } }>(
    '/api/orders/:orderId/files/:fileId',
    async (request, reply) => {
      try {
        const file = await fileForLink(createContext({ req: request, res: reply }), {
          orderId: request.params.orderId,
          fileId: request.params.fileId,
          expires: Number(request.query.expires),
          sig: String(request.query.sig ?? ''),
        });
        return reply
          .header('Content-Type', file.contentType)
          .header('Content-Length', String(file.size))
          .header('Content-Disposition', `attachment; filename="${file.name.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(file.name)}`)
          .header('Cache-Control', 'private, no-store')
          .send(opts.deps.storage.read(file.storageKey));
      } catch (error) {
        const pub = toPublicError(error);
        if (pub.internal) request.log.error({ err: error }, 'download failed');
        return sendError(reply, pub);
      }
    },
  );
}
