/**
 * File uploads (multipart/form-data) for products. Not a tRPC procedure (tRPC and the REST
 * adapter speak JSON), but the same guards decide: seller session, CSRF token, and the
 * manageProducts permission in the store of the path.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';
import { AppError, invalidField, toPublicError } from '../lib/errors.js';
import { uploadProductFile } from '../modules/catalog/files.service.js';
import { contextFactory } from '../trpc/context.js';
import { authenticateSession, requireMember } from '../trpc/guards.js';
import { sendError } from './error-reply.js';

export const UPLOAD_PATH = '/api/dashboard/stores/:storeId/products/:productId/files';

export async function uploadsPlugin(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const createContext = contextFactory(opts.deps);
  await app.register(multipart, {
    // One file per request; the storage adapter enforces the byte limit while streaming.
    limits: { files: 1, fields: 0, parts: 1, fileSize: opts.deps.config.fileMaxBytes + 1 },
  });

  app.post<{ Params: { storeId: string; productId: string } }>(UPLOAD_PATH, async (request, reply) => {
    const ctx = createContext({ req: request, res: reply });
    try {
      if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the file as multipart/form-data.');
      const { user } = await authenticateSession(ctx, 'mutation');
      await requireMember(ctx, user.id, request.params.storeId, 'manageProducts');
      const part = await request.file();
      if (!part) throw invalidField('file', 'Attach one file.');
      const view = await uploadProductFile(ctx, {
        storeId: request.params.storeId,
        productId: request.params.productId,
        name: part.filename,
        contentType: part.mimetype,
        stream: part.file,
      });
      return reply.code(201).send(view);
    } catch (error) {
      const pub = toPublicError(error);
      if (pub.internal) request.log.error({ err: error }, 'upload failed');
      return sendError(reply, pub);
    }
  });
}
