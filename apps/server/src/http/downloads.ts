/**
 * `GET /api/orders/{orderId}/files/{fileId}?expires=&sig=`: a signed, expiring file link from the
 * delivery payload. With the files in an object store, the checked link answers 302 to a presigned
 * URL of the store instead of streaming the file through svc (docs/decisions.md, #43).
 */
import { z } from 'zod';
import { contentDisposition, servedMediaType } from '../lib/storage.js';
import { fileForLink } from '../modules/fulfilment/delivery.service.js';
import { plainRoute } from './plain-route.js';

/** Long enough to start the download, short enough that a copied URL soon stops working. */
const PRESIGNED_SECONDS = 5 * 60;

export const fileDownloadRoute = plainRoute({
  name: 'fulfilment.downloadFile',
  method: 'GET',
  path: '/api/orders/{orderId}/files/{fileId}',
  body: 'none',
  // Both come from the link; a link without them is refused like a wrong one (403).
  query: z.strictObject({ expires: z.string().max(20).optional(), sig: z.string().max(128).optional() }),
  // The link's own signature (made by the delivery payload) is the credential.
  policy: { auth: { kind: 'signature' }, csrf: 'none', cors: 'none', errors: ['store_forbidden', 'not_found'] },
  openapi: {
    operationId: 'fulfilment-downloadFile',
    summary: 'Download a file of a paid order through the signed, expiring link from /delivery',
    tags: ['buyer'],
    requestParams: { path: z.object({ orderId: z.string(), fileId: z.string() }) },
    responses: {
      302: {
        description: `With the files in an object store: a redirect to the store's presigned URL of the file, valid for ${PRESIGNED_SECONDS / 60} minutes; the store answers it with the file's name and media type`,
        headers: z.object({ Location: z.url().meta({ description: "The store's presigned URL of the file" }) }),
      },
      200: {
        description: 'The file',
        content: {
          '*/*': {
            schema: z
              .string()
              .meta({ format: 'binary', description: 'The file, in the media type it was stored with' }),
          },
        },
      },
    },
  },
  async handler(ctx, _request, reply) {
    const file = await fileForLink(ctx, {
      orderId: ctx.params.orderId!,
      fileId: ctx.params.fileId!,
      expires: Number(ctx.query.expires),
      sig: String(ctx.query.sig ?? ''),
    });
    const { storage } = ctx.deps;
    if (storage.downloadUrl) {
      const url = await storage.downloadUrl(file.storageKey, {
        fileName: file.name,
        mediaType: servedMediaType(file.contentType),
        expiresInSeconds: PRESIGNED_SECONDS,
      });
      return reply.header('Cache-Control', 'private, no-store').redirect(url, 302);
    }
    return reply
      .header('Content-Type', servedMediaType(file.contentType))
      .header('Content-Length', String(file.size))
      .header('Content-Disposition', contentDisposition(file.name))
      .header('Cache-Control', 'private, no-store')
      .send(ctx.deps.storage.read(file.storageKey));
  },
});
