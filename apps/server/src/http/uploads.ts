/**
 * File uploads (multipart/form-data): product files (seller session, CSRF token and
 * manageProducts in the store of the path) and a buyer's proof of manual payment (the
 * order's checkout token), plus the seller's download of that proof. Not tRPC procedures
 * (tRPC and the REST adapter speak JSON), but the same guards decide.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.js';
import { AppError, invalidField, toPublicError } from '../lib/errors.js';
import { uploadProductFile } from '../modules/catalog/files.service.js';
import { CHECKOUT_COOKIE } from '../modules/checkout/checkout.service.js';
import { paymentProofOf, uploadPaymentProof } from '../modules/payments/proofs.service.js';
import { readCookie } from '../lib/cookies.js';
import { contextFactory } from '../trpc/context.js';
import { authenticateSession, requireMember } from '../trpc/guards.js';
import { sendError } from './error-reply.js';

export const UPLOAD_PATH = '/api/dashboard/stores/:storeId/products/:productId/files';
export const PROOF_PATH = '/api/orders/:orderId/payment-proof';
export const DASHBOARD_PROOF_PATH = '/api/dashboard/stores/:storeId/orders/:orderId/payment-proof';

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
      return fail(request, reply, error);
    }
  });

  // The buyer's proof of a manual payment: the checkout token in the query or the svc_checkout cookie.
  app.post<{ Params: { orderId: string }; Querystring: { token?: string } }>(PROOF_PATH, async (request, reply) => {
    const ctx = createContext({ req: request, res: reply });
    try {
      if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the proof as multipart/form-data.');
      const [cookieOrder, cookieToken] = (readCookie(request, CHECKOUT_COOKIE) ?? '').split('.');
      const token = request.query.token ?? (cookieOrder === request.params.orderId ? cookieToken : undefined);
      if (!token) throw new AppError('unauthorized', 'Open the order with its checkout link first.');
      const part = await request.file();
      if (!part) throw invalidField('file', 'Attach one file.');
      const result = await uploadPaymentProof(ctx, { orderId: request.params.orderId, token, name: part.filename, contentType: part.mimetype, stream: part.file });
      return reply.code(201).send(result);
    } catch (error) {
      return fail(request, reply, error);
    }
  });

  app.get<{ Params: { storeId: string; orderId: string } }>(DASHBOARD_PROOF_PATH, async (request, reply) => {
    const ctx = createContext({ req: request, res: reply });
    try {
      const { user } = await authenticateSession(ctx, 'query');
      await requireMember(ctx, user.id, request.params.storeId, 'viewOrders');
      const file = await paymentProofOf(ctx, request.params.storeId, request.params.orderId);
      return reply
        .header('Content-Type', file.contentType)
        .header('Content-Length', String(file.size))
        .header('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`)
        .header('Cache-Control', 'private, no-store')
        .send(opts.deps.storage.read(file.storageKey));
    } catch (error) {
      return fail(request, reply, error);
    }
  });
}

/**
 * What @fastify/multipart and busboy throw for a body that is not the multipart they expect
 * (no boundary, cut short, a field or a second part where one file belongs): the client's
 * mistake, not ours. Their own errors carry a 4xx `statusCode`; busboy's are plain Errors.
 */
function multipartError(error: unknown): AppError | undefined {
  if (error instanceof AppError || !error || typeof error !== 'object') return undefined;
  const e = error as { code?: unknown; statusCode?: unknown; message?: unknown };
  if (typeof e.code === 'string' && e.code.startsWith('FST_') && typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    if (e.code === 'FST_REQ_FILE_TOO_LARGE') return new AppError('payload_too_large');
    return invalidField('file', 'Send one part, named file, holding the file.');
  }
  if (typeof e.message === 'string' && /^(Multipart: |Unexpected end of multipart data|.* terminated early due to unexpected end of multipart data)/.test(e.message)) {
    return invalidField('file', 'The multipart body is not valid.');
  }
  return undefined;
}

function fail(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  const pub = toPublicError(multipartError(error) ?? error);
  if (pub.internal) request.log.error({ err: error }, 'upload route failed');
  return sendError(reply, pub);
}
