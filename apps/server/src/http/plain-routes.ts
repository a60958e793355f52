/** Every plain route of the application (routes that are not procedures), for the app and the route table. */
import { DASHBOARD_ROUTES } from './dashboard.js';
import { fileDownloadRoute } from './downloads.js';
import { homeRoute } from './home.js';
import { INVOICE_ROUTES } from './invoices.js';
import { licenseJwksRoute } from './license-jwks.js';
import { MAILBOX_ROUTES } from './mailbox.js';
import { OPS_ROUTES } from './ops.js';
import { PAGE_ROUTES } from './pages.js';
import { paymentNotificationRoute } from './payment-webhooks.js';
import type { PlainRoute } from './plain-route.js';
import { sdkThemeScriptRoute } from './sdk-script.js';
import { STOREFRONT_ROUTES } from './storefront.js';
import { TEST_PAY_ROUTES } from './test-pay.js';
import { UPLOAD_ROUTES } from './uploads.js';

export const PLAIN_ROUTES: readonly PlainRoute[] = [
  paymentNotificationRoute,
  ...UPLOAD_ROUTES,
  fileDownloadRoute,
  ...INVOICE_ROUTES,
  licenseJwksRoute,
  ...PAGE_ROUTES,
  ...STOREFRONT_ROUTES,
  sdkThemeScriptRoute,
  ...TEST_PAY_ROUTES,
  ...OPS_ROUTES,
  ...MAILBOX_ROUTES,
  ...DASHBOARD_ROUTES,
  homeRoute,
];
