/**
 * File uploads (multipart/form-data) and the seller's download of a payment proof: product files
 * (seller session, CSRF token, manageProducts in the store of the path), a buyer's proof of
 * manual payment (the order's checkout token in the query or the svc_checkout cookie), and the
 * proof for the dashboard (viewOrders). Not procedures (tRPC and the REST adapter speak JSON);
 * the same guards decide, through plainRoute().
 */
import { PassThrough, finished, type Readable } from 'node:stream';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  PRODUCT_IMAGE_MAX_BYTES,
  PRODUCT_IMAGES_MAX,
  ZBuyerToken,
  ZCount,
  ZProductImageList,
  ZStoredFile,
} from '@svc/schemas';
import { AppError, invalidField } from '../lib/errors.js';
import { assertReadable } from '../lib/input-limits.js';
import { servedMediaType, uploadedMediaType } from '../lib/storage.js';
import { uploadProductFile } from '../modules/catalog/files.service.js';
import { productImageFile, uploadProductImage } from '../modules/catalog/images.service.js';
import { deleteStoreLogo, LOGO_MAX_BYTES, LOGO_MAX_SIDE, uploadStoreLogo } from '../modules/catalog/logo.service.js';
import { checkoutTokenFor } from '../modules/orders/checkout-cookie.js';
import { paymentProofOf, uploadPaymentProof } from '../modules/payments/proofs.service.js';
import { plainRoute, type PlainContext, type PlainRoute } from './plain-route.js';

const ONE_PART = 'Send one part, named file, holding the file.';

const MULTIPART_FILE = { 'multipart/form-data': { schema: z.object({ file: z.string().meta({ format: 'binary' }) }) } };

/**
 * What @fastify/multipart and busboy throw for a body that is not the multipart they expect
 * (no boundary, cut short, a field or a second part where one file belongs): the client's
 * mistake, not ours. Their own errors carry a 4xx `statusCode`; busboy's are plain Errors.
 */
function multipartError(error: unknown): unknown {
  if (error instanceof AppError || !error || typeof error !== 'object') return error;
  const e = error as { code?: unknown; statusCode?: unknown; message?: unknown };
  if (
    typeof e.code === 'string' &&
    e.code.startsWith('FST_') &&
    typeof e.statusCode === 'number' &&
    e.statusCode >= 400 &&
    e.statusCode < 500
  ) {
    if (e.code === 'FST_REQ_FILE_TOO_LARGE') return new AppError('payload_too_large');
    return invalidField('file', ONE_PART);
  }
  if (
    typeof e.message === 'string' &&
    /^(Multipart: |Unexpected end of multipart data|.* terminated early due to unexpected end of multipart data)/.test(
      e.message,
    )
  ) {
    return invalidField('file', 'The multipart body is not valid.');
  }
  return error;
}

/**
 * The body's one file part, with its content as a stream that ends only when the whole body has
 * been read and held nothing more. A second part, or a limit busboy raises after the file, fails
 * the stream instead: the service storing it then fails before it writes a row, and its storage
 * keeps nothing (`FileStorage.write` removes what it had written of a stream that fails).
 * `request.file()` handed over the first file and never looked further, so a body with two file
 * parts stored the first and answered 201.
 */
async function soleFile(request: FastifyRequest): Promise<{ part: MultipartFile; content: PassThrough }> {
  const parts = request.parts();
  const first = await parts.next();
  if (first.done || first.value.type !== 'file') throw invalidField('file', 'Attach one file.');
  const part = first.value;
  const content = new PassThrough();
  // A failure can come before the service has taken the stream (it looks the order or product up
  // first): it stays on the stream (`errored`) for the pipeline that reads it, instead of being an
  // 'error' event nobody listens to.
  content.on('error', () => undefined);
  // finished(), not 'end' and 'error' listeners: busboy may have failed the part (a body cut
  // short) before this handler got it, and a listener added now would wait forever.
  finished(part.file, (error) => {
    if (error) return void content.destroy(error);
    parts.next().then(
      (next) => (next.done ? content.end() : content.destroy(invalidField('file', ONE_PART))),
      (failure: Error) => content.destroy(failure),
    );
  });
  part.file.pipe(content, { end: false });
  return { part, content };
}

/**
 * Runs `store` with the body's one file; when it fails before reading the file to its end (an
 * order no longer pending, a product of another store), the rest of the body is read and dropped
 * as the refusal goes out. Once the body is piped to the multipart parser Node no longer
 * drains it after the answer, so a kept-alive connection would wait for a body nobody reads: the
 * client's next request on it was never answered (seen with a 3 MB upload refused with 404). The
 * parser drops what is past the file size limit as it reads, so this costs what an accepted
 * upload of the same body would.
 */
async function withSoleFile<T>(
  request: FastifyRequest,
  store: (part: MultipartFile, content: Readable) => Promise<T>,
): Promise<T> {
  const { part, content } = await soleFile(request);
  try {
    return await store(part, content);
  } catch (error) {
    content.resume();
    part.file.resume();
    throw error;
  }
}

/**
 * Runs an upload that decodes a picture (a product image, a logo): when the image queue is full
 * (503, modules/catalog/image-work.ts) the answer says to try again in a moment.
 */
async function decodingPicture<T>(ctx: PlainContext, upload: () => Promise<T>): Promise<T> {
  try {
    return await upload();
  } catch (error) {
    if (error instanceof AppError && error.appCode === 'service_unavailable') ctx.answer.headers['Retry-After'] = '2';
    throw error;
  }
}

export const productFileUploadRoute = plainRoute({
  name: 'catalog.uploadFile',
  method: 'POST',
  path: '/api/dashboard/stores/{storeId}/products/{productId}/files',
  body: 'multipart',
  query: z.strictObject({}),
  policy: {
    auth: { kind: 'session', store: { permission: 'manageProducts' } },
    csrf: 'required',
    cors: 'none',
    successStatus: 201,
    errors: ['not_found', 'payload_too_large', 'unsupported_media_type'],
  },
  openapi: {
    operationId: 'catalog-uploadFile',
    summary: 'Upload a downloadable file for a product (multipart/form-data, one part named "file")',
    tags: ['dashboard: products'],
    requestParams: { path: z.object({ storeId: z.string(), productId: z.string() }) },
    requestBody: { required: true, content: MULTIPART_FILE },
    responses: { 201: { description: 'The stored file', content: { 'application/json': { schema: ZStoredFile } } } },
  },
  mapError: multipartError,
  async handler(ctx, request, reply) {
    if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the file as multipart/form-data.');
    const view = await withSoleFile(request, (part, content) => {
      assertReadable({ file: { name: part.filename, contentType: part.mimetype } });
      return uploadProductFile(ctx, {
        storeId: ctx.params.storeId!,
        productId: ctx.params.productId!,
        name: part.filename,
        contentType: uploadedMediaType(part.mimetype),
        stream: content,
      });
    });
    return reply.code(201).send(view);
  },
});

export const paymentProofUploadRoute = plainRoute({
  name: 'payments.uploadProof',
  method: 'POST',
  path: '/api/orders/{orderId}/payment-proof',
  body: 'multipart',
  query: z.strictObject({ token: ZBuyerToken.optional() }),
  policy: {
    auth: { kind: 'buyer', staffSession: false },
    csrf: 'none',
    cors: 'none',
    // A buyer sends one proof, a few when they got it wrong; each may be 10 MiB (decisions.md, #26).
    rateLimit: { name: 'payments.uploadProof', max: 10, windowMs: 10 * 60_000 },
    successStatus: 201,
    errors: ['order_not_pending', 'conflict', 'payload_too_large', 'unsupported_media_type'],
  },
  openapi: {
    operationId: 'payments-uploadProof',
    summary:
      'Upload proof of a manual payment (multipart/form-data, one part named "file"); the checkout token in ?token= or the svc_checkout cookie',
    tags: ['buyer'],
    requestParams: { path: z.object({ orderId: z.string() }) },
    requestBody: { required: true, content: MULTIPART_FILE },
    responses: {
      201: {
        description: 'Stored; the seller reviews it and marks the order paid',
        content: {
          'application/json': {
            schema: z.object({
              orderId: z.string(),
              proof: z.object({ name: z.string(), size: ZCount, contentType: z.string() }),
            }),
          },
        },
      },
    },
  },
  mapError: multipartError,
  async handler(ctx, request, reply) {
    if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the proof as multipart/form-data.');
    const orderId = ctx.params.orderId!;
    const token = ctx.query.token ?? checkoutTokenFor(ctx.caller.credentials.checkout, orderId);
    if (!token) throw new AppError('unauthorized', 'Open the order with its checkout link first.');
    const result = await withSoleFile(request, (part, content) => {
      assertReadable({ file: { name: part.filename, contentType: part.mimetype } });
      return uploadPaymentProof(ctx, {
        orderId,
        token,
        name: part.filename,
        contentType: uploadedMediaType(part.mimetype),
        stream: content,
      });
    });
    return reply.code(201).send(result);
  },
});

export const paymentProofDownloadRoute = plainRoute({
  name: 'payments.dashboardProof',
  method: 'GET',
  path: '/api/dashboard/stores/{storeId}/orders/{orderId}/payment-proof',
  body: 'none',
  query: z.strictObject({}),
  policy: {
    auth: { kind: 'session', store: { permission: 'viewOrders' } },
    csrf: 'required',
    cors: 'none',
    errors: ['not_found'],
  },
  openapi: {
    operationId: 'payments-dashboardProof',
    summary: "Download an order's proof of manual payment",
    tags: ['dashboard'],
    requestParams: { path: z.object({ storeId: z.string(), orderId: z.string() }) },
    responses: {
      200: {
        description: 'The file the buyer sent',
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
    const file = await paymentProofOf(ctx, ctx.params.storeId!, ctx.params.orderId!);
    return reply
      .header('Content-Type', servedMediaType(file.contentType))
      .header('Content-Length', String(file.size))
      .header('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`)
      .header('Cache-Control', 'private, no-store')
      .send(ctx.deps.storage.read(file.storageKey));
  },
});

/** The store's logo routes: the same on the dashboard (session, manageSettings) and the merchant API (key, store:write). */
function logoPolicy(surface: 'dashboard' | 'merchant') {
  return surface === 'dashboard'
    ? ({ auth: { kind: 'session', store: { permission: 'manageSettings' } }, csrf: 'required', cors: 'none' } as const)
    : ({ auth: { kind: 'apiKey', scope: 'store:write' }, csrf: 'none', cors: 'none' } as const);
}

function logoPath(surface: 'dashboard' | 'merchant') {
  return `/api/${surface === 'dashboard' ? 'dashboard' : 'merchant/v1'}/stores/{storeId}/logo` as const;
}

function storeLogoUploadRoute(surface: 'dashboard' | 'merchant'): PlainRoute {
  const dashboard = surface === 'dashboard';
  return plainRoute({
    name: dashboard ? 'stores.uploadLogo' : 'stores.merchantUploadLogo',
    method: 'POST',
    path: logoPath(surface),
    body: 'multipart',
    query: z.strictObject({}),
    policy: { ...logoPolicy(surface), errors: ['payload_too_large', 'unsupported_media_type'] },
    openapi: {
      operationId: dashboard ? 'stores-uploadLogo' : 'stores-merchantUploadLogo',
      summary: `Upload the store's logo (PNG, JPEG or WebP, at most ${LOGO_MAX_BYTES} bytes and 4096 × 4096 pixels; multipart/form-data, one part named "file"); it replaces the old one, stored encoded again without its metadata, at most ${LOGO_MAX_SIDE} px a side`,
      tags: [dashboard ? 'dashboard' : 'merchant: store'],
      requestParams: { path: z.object({ storeId: z.string() }) },
      requestBody: { required: true, content: MULTIPART_FILE },
      responses: {
        200: {
          description: "The logo's address on the storefront",
          content: { 'application/json': { schema: z.object({ logoUrl: z.string().nullable() }) } },
        },
      },
    },
    mapError: multipartError,
    async handler(ctx, request, reply) {
      if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the logo as multipart/form-data.');
      const result = await decodingPicture(ctx, () =>
        withSoleFile(request, (_part, content) =>
          uploadStoreLogo(ctx, { storeId: ctx.params.storeId!, stream: content }),
        ),
      );
      return reply.send(result);
    },
  });
}

function storeLogoDeleteRoute(surface: 'dashboard' | 'merchant'): PlainRoute {
  const dashboard = surface === 'dashboard';
  return plainRoute({
    name: dashboard ? 'stores.deleteLogo' : 'stores.merchantDeleteLogo',
    method: 'DELETE',
    path: logoPath(surface),
    body: 'none',
    query: z.strictObject({}),
    policy: { ...logoPolicy(surface), successStatus: 204, errors: ['unsupported_media_type'] },
    openapi: {
      operationId: dashboard ? 'stores-deleteLogo' : 'stores-merchantDeleteLogo',
      summary: "Remove the store's logo",
      tags: [dashboard ? 'dashboard' : 'merchant: store'],
      requestParams: { path: z.object({ storeId: z.string() }) },
      responses: { 204: { description: 'Removed (or there was none)' } },
    },
    async handler(ctx, request, reply) {
      // No body is read here: one sent anyway is refused, not ignored (the parsers still ran on it).
      const type = request.headers['content-type'];
      if (type !== undefined)
        throw type.startsWith('application/json')
          ? invalidField('', 'This request takes no body.')
          : new AppError('unsupported_media_type', 'This request takes no body.');
      await deleteStoreLogo(ctx, { storeId: ctx.params.storeId! });
      return reply.code(204).send();
    },
  });
}

/** Adding a product image: the same on the dashboard (session) and the merchant API (key, product:write). */
function productImageUploadRoute(surface: 'dashboard' | 'merchant'): PlainRoute {
  const dashboard = surface === 'dashboard';
  return plainRoute({
    name: dashboard ? 'catalog.uploadImage' : 'catalog.merchantUploadImage',
    method: 'POST',
    path: `/api/${dashboard ? 'dashboard' : 'merchant/v1'}/stores/{storeId}/products/{productId}/images`,
    body: 'multipart',
    query: z.strictObject({}),
    policy: {
      auth: dashboard
        ? { kind: 'session', store: { permission: 'manageProducts' } }
        : { kind: 'apiKey', scope: 'product:write' },
      csrf: dashboard ? 'required' : 'none',
      cors: 'none',
      successStatus: 201,
      errors: ['not_found', 'conflict', 'payload_too_large', 'unsupported_media_type'],
    },
    openapi: {
      operationId: dashboard ? 'catalog-uploadImage' : 'catalog-merchantUploadImage',
      summary: `Add an image to a product (PNG, JPEG or WebP, at most ${PRODUCT_IMAGE_MAX_BYTES} bytes and 4096 × 4096 pixels, at most ${PRODUCT_IMAGES_MAX} per product; multipart/form-data, one part named "file"); it is served as WebP 480 and 960 px wide`,
      tags: [dashboard ? 'dashboard: products' : 'merchant: products'],
      requestParams: { path: z.object({ storeId: z.string(), productId: z.string() }) },
      requestBody: { required: true, content: MULTIPART_FILE },
      responses: {
        201: {
          description: "The product's images, the new one last",
          content: { 'application/json': { schema: ZProductImageList } },
        },
      },
    },
    mapError: multipartError,
    async handler(ctx, request, reply) {
      if (!request.isMultipart())
        throw new AppError('unsupported_media_type', 'Send the image as multipart/form-data.');
      const result = await decodingPicture(ctx, () =>
        withSoleFile(request, (_part, content) =>
          uploadProductImage(ctx, { storeId: ctx.params.storeId!, productId: ctx.params.productId!, stream: content }),
        ),
      );
      return reply.code(201).send(result);
    },
  });
}

/** A rendition's file name in the image address: `<width>.webp`. */
const RENDITION = /^([1-9][0-9]{0,3})\.webp$/;

/** A product image's WebP rendition: public (storefronts and themes on any origin), immutable. */
export const productImageRoute = plainRoute({
  name: 'catalog.image',
  method: 'GET',
  path: '/images/{productId}/{imageId}/{file}',
  body: 'none',
  policy: { auth: { kind: 'public', audience: 'storefront' }, csrf: 'none', cors: 'open', errors: ['not_found'] },
  openapi: false,
  renderError: (reply) => reply.code(404).header('Cache-Control', 'no-store').send(),
  async handler(ctx, _request, reply) {
    const width = RENDITION.exec(ctx.params.file!)?.[1];
    if (!width) throw new AppError('not_found', 'No such image.');
    const { storageKey } = await productImageFile(ctx, {
      productId: ctx.params.productId!,
      imageId: ctx.params.imageId!,
      width: Number(width),
    });
    return (
      reply
        .header('Content-Type', 'image/webp')
        .header('Cache-Control', 'public, max-age=31536000, immutable')
        // A theme on its own origin shows it (the default same-origin made the browser refuse it).
        .header('Cross-Origin-Resource-Policy', 'cross-origin')
        .send(ctx.deps.storage.read(storageKey))
    );
  },
});

export const UPLOAD_ROUTES = [
  productImageUploadRoute('dashboard'),
  productImageUploadRoute('merchant'),
  productImageRoute,
  productFileUploadRoute,
  paymentProofUploadRoute,
  paymentProofDownloadRoute,
  storeLogoUploadRoute('dashboard'),
  storeLogoDeleteRoute('dashboard'),
  storeLogoUploadRoute('merchant'),
  storeLogoDeleteRoute('merchant'),
];
