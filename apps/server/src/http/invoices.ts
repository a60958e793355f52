/**
 * An order's invoice and credit note as PDFs (modules/invoices): binary answers, so plain routes,
 * each declared once here with its policy. The store's: the merchant API (a key with
 * `order:read`) and the dashboard (a member with viewOrders), the order by id or ORD-<n> in the
 * credential's store and mode. The buyer's: the order's own access, exactly as its order page
 * and delivery have it (buyerOrderAccess: the token link, the svc_checkout cookie, the e-mail when
 * the store allows it, a customer session, a staff session with viewOrders). 404 `not_found` with
 * our error body when the order has no such document.
 */
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { ZBuyerToken } from '@svc/schemas';
import type { InvoiceKind } from '../modules/invoices/invoice-document.js';
import { orderDocumentPdf, storeOrderDocumentPdf, type InvoicePdf } from '../modules/invoices/invoices.service.js';
import { buyerOrderAccess } from '../modules/fulfilment/delivery.service.js';
import { plainRoute, type PlainRoute } from './plain-route.js';

const DOCUMENTS: Record<InvoiceKind, { segment: string; name: string; words: string; numbers: string }> = {
  invoice: { segment: 'invoice', name: 'Invoice', words: 'invoice', numbers: 'INV-<year>-<n>' },
  creditNote: { segment: 'credit-note', name: 'CreditNote', words: 'credit note', numbers: 'CN-<year>-<n>' },
};

const PDF_RESPONSE = (kind: InvoiceKind) => ({
  200: {
    description: `The ${DOCUMENTS[kind].words} (${DOCUMENTS[kind].numbers}) as a PDF; \`Content-Disposition\` names it by its number`,
    content: {
      'application/pdf': { schema: z.string().meta({ format: 'binary', description: 'The PDF document' }) },
    },
  },
});

const WHO_HAS_ONE: Record<InvoiceKind, string> = {
  invoice: 'an order paid while the store charged tax has one; 404 `not_found` otherwise',
  creditNote: 'an invoiced order that was refunded has one; 404 `not_found` otherwise',
};

function sendPdf(reply: FastifyReply, document: InvoicePdf): FastifyReply {
  return (
    reply
      .header('Content-Type', 'application/pdf')
      .header('Content-Length', String(document.pdf.length))
      .header('Content-Disposition', `inline; filename="${document.fileName}"`)
      // It names the buyer: no shared cache keeps a copy.
      .header('Cache-Control', 'private, no-store')
      .send(document.pdf)
  );
}

/** The store's document of an order: the merchant API (key, order:read) and the dashboard (session, viewOrders). */
function storeDocumentRoute(surface: 'dashboard' | 'merchant', kind: InvoiceKind): PlainRoute {
  const dashboard = surface === 'dashboard';
  const { segment, name, words } = DOCUMENTS[kind];
  return plainRoute({
    name: dashboard ? `invoices.dashboard${name}` : `invoices.merchant${name}`,
    method: 'GET',
    path: `/api/${dashboard ? 'dashboard' : 'merchant/v1'}/stores/{storeId}/orders/{orderId}/${segment}`,
    body: 'none',
    query: z.strictObject({}),
    policy: dashboard
      ? {
          auth: { kind: 'session', store: { permission: 'viewOrders' } },
          csrf: 'required',
          cors: 'none',
          errors: ['not_found'],
        }
      : { auth: { kind: 'apiKey', scope: 'order:read' }, csrf: 'none', cors: 'none', errors: ['not_found'] },
    openapi: {
      operationId: dashboard ? `invoices-dashboard${name}` : `invoices-merchant${name}`,
      summary: `The order's ${words} as a PDF, the order by id or ORD-<n>: ${WHO_HAS_ONE[kind]}`,
      tags: [dashboard ? 'dashboard' : 'merchant: orders'],
      requestParams: { path: z.object({ storeId: z.string(), orderId: z.string() }) },
      responses: PDF_RESPONSE(kind),
    },
    async handler(ctx, _request, reply) {
      const document = await storeOrderDocumentPdf(ctx, {
        storeId: ctx.params.storeId!,
        orderId: ctx.params.orderId!,
        kind,
      });
      return sendPdf(reply, document);
    },
  });
}

/** The buyer's document of their order, through the order's own access (as its delivery). */
function buyerDocumentRoute(kind: InvoiceKind): PlainRoute {
  const { segment, name, words } = DOCUMENTS[kind];
  return plainRoute({
    name: `invoices.buyer${name}`,
    method: 'GET',
    path: `/api/orders/{orderId}/${segment}`,
    body: 'none',
    query: z.strictObject({ token: ZBuyerToken.optional(), email: z.string().max(320).optional() }),
    // A plain link from the order page and the receipt: same origin, no CORS.
    policy: {
      auth: { kind: 'buyer', staffSession: true },
      csrf: 'required',
      cors: 'none',
      errors: ['order_not_paid', 'permission_missing', 'not_found'],
    },
    openapi: {
      operationId: `invoices-buyer${name}`,
      summary: `The buyer's ${words} of their order as a PDF (the order's link token in ?token=, the svc_checkout cookie, ?email= when the store allows it, or a customer session): ${WHO_HAS_ONE[kind]}`,
      tags: ['buyer'],
      requestParams: { path: z.object({ orderId: z.string() }) },
      responses: PDF_RESPONSE(kind),
    },
    async handler(ctx, _request, reply) {
      const order = await buyerOrderAccess(ctx, {
        orderId: ctx.params.orderId!,
        token: ctx.query.token,
        email: ctx.query.email,
      });
      return sendPdf(reply, await orderDocumentPdf(ctx, { order, kind }));
    },
  });
}

export const INVOICE_ROUTES: readonly PlainRoute[] = (['invoice', 'creditNote'] as const).flatMap((kind) => [
  storeDocumentRoute('merchant', kind),
  storeDocumentRoute('dashboard', kind),
  buyerDocumentRoute(kind),
]);
