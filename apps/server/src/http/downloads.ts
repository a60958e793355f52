/** `GET /api/orders/{orderId}/files/{fileId}?expires=&sig=`: a signed, expiring file link from the delivery payload. */
import { z } from 'zod';
import { servedMediaType } from '../lib/storage.js';
import { fileForLink } from '../modules/fulfilment/delivery.service.js';
import { plainRoute } from './plain-route.js';

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
    return reply
      .header('Content-Type', servedMediaType(file.contentType))
      .header('Content-Length', String(file.size))
      .header(
        'Content-Disposition',
        `attachment; filename="${file.name.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(file.name)}`,
      )
      .header('Cache-Control', 'private, no-store')
      .send(ctx.deps.storage.read(file.storageKey));
  },
});
