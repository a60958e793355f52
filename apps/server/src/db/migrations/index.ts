/**
 * The ordered list of migrations, written by `npm run migration:create` (db/create-migration.ts).
 * Listed explicitly (not discovered from the file system) so the same list runs from TypeScript
 * sources in tests and from the compiled build in production.
 */
import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122224025_baseline } from './Migration20261122224025_baseline.js';
import { Migration20261122225838_event_prune_index } from './Migration20261122225838_event_prune_index.js';
import { Migration20261124004151_license_api } from './Migration20261124004151_license_api.js';
import { Migration20261125123055_endpoint_due_index } from './Migration20261125123055_endpoint_due_index.js';
import { Migration20261125223429_payment_proofs_kept } from './Migration20261125223429_payment_proofs_kept.js';
import { Migration20261125224236_mail_outbox } from './Migration20261125224236_mail_outbox.js';
import { Migration20261126000343_payment_refund_ref } from './Migration20261126000343_payment_refund_ref.js';
import { Migration20261126011900_dashboard_data } from './Migration20261126011900_dashboard_data.js';
import { Migration20261126012932_webhook_disabled_reason } from './Migration20261126012932_webhook_disabled_reason.js';
import { Migration20261126023435_store_look } from './Migration20261126023435_store_look.js';
import { Migration20261126051230_product_images } from './Migration20261126051230_product_images.js';
import { Migration20261126052204_webhook_request_headers } from './Migration20261126052204_webhook_request_headers.js';
import { Migration20261126054100_test_mode } from './Migration20261126054100_test_mode.js';
import { Migration20261126082147_test_data_wipe } from './Migration20261126082147_test_data_wipe.js';
import { Migration20261128072009_sign_in_code } from './Migration20261128072009_sign_in_code.js';
import { Migration20261128104426_two_factor } from './Migration20261128104426_two_factor.js';
import { Migration20261128104500_order_coupon_code } from './Migration20261128104500_order_coupon_code.js';
import { Migration20261128105338_session_last_seen } from './Migration20261128105338_session_last_seen.js';
import { Migration20261128110000_event_seq } from './Migration20261128110000_event_seq.js';
import { Migration20261128110306_email_change } from './Migration20261128110306_email_change.js';
import { Migration20261128111500_customers_by_email } from './Migration20261128111500_customers_by_email.js';
import { Migration20261128124812_staff_two_factor_account_name } from './Migration20261128124812_staff_two_factor_account_name.js';
import { Migration20261128125122_store_onboarding } from './Migration20261128125122_store_onboarding.js';
import { Migration20261128125552_saved_payment_methods } from './Migration20261128125552_saved_payment_methods.js';
import { Migration20261128125643_product_plans } from './Migration20261128125643_product_plans.js';
import { Migration20261128133711_subscriptions } from './Migration20261128133711_subscriptions.js';
import { Migration20261128161808_licenses_follow_subscriptions } from './Migration20261128161808_licenses_follow_subscriptions.js';
import { Migration20261128163021_renewal_orders } from './Migration20261128163021_renewal_orders.js';
import { Migration20261128193209_customer_subscriptions } from './Migration20261128193209_customer_subscriptions.js';
import { Migration20261128193233_subscription_figures } from './Migration20261128193233_subscription_figures.js';
import { Migration20261128195832_license_signing_keys } from './Migration20261128195832_license_signing_keys.js';
import { Migration20261128231507_subscription_mrr_months } from './Migration20261128231507_subscription_mrr_months.js';
import { Migration20261129051327_tax_and_invoices } from './Migration20261129051327_tax_and_invoices.js';
import { Migration20261129052509_tax_report_credit_notes } from './Migration20261129052509_tax_report_credit_notes.js';
import { Migration20261129083350_invoice_seller } from './Migration20261129083350_invoice_seller.js';

export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122224025_baseline', class: Migration20261122224025_baseline },
  { name: 'Migration20261122225838_event_prune_index', class: Migration20261122225838_event_prune_index },
  { name: 'Migration20261124004151_license_api', class: Migration20261124004151_license_api },
  { name: 'Migration20261125123055_endpoint_due_index', class: Migration20261125123055_endpoint_due_index },
  { name: 'Migration20261125223429_payment_proofs_kept', class: Migration20261125223429_payment_proofs_kept },
  { name: 'Migration20261125224236_mail_outbox', class: Migration20261125224236_mail_outbox },
  { name: 'Migration20261126000343_payment_refund_ref', class: Migration20261126000343_payment_refund_ref },
  { name: 'Migration20261126011900_dashboard_data', class: Migration20261126011900_dashboard_data },
  { name: 'Migration20261126012932_webhook_disabled_reason', class: Migration20261126012932_webhook_disabled_reason },
  { name: 'Migration20261126023435_store_look', class: Migration20261126023435_store_look },
  { name: 'Migration20261126051230_product_images', class: Migration20261126051230_product_images },
  { name: 'Migration20261126052204_webhook_request_headers', class: Migration20261126052204_webhook_request_headers },
  { name: 'Migration20261126054100_test_mode', class: Migration20261126054100_test_mode },
  { name: 'Migration20261126082147_test_data_wipe', class: Migration20261126082147_test_data_wipe },
  { name: 'Migration20261128072009_sign_in_code', class: Migration20261128072009_sign_in_code },
  { name: 'Migration20261128104426_two_factor', class: Migration20261128104426_two_factor },
  { name: 'Migration20261128104500_order_coupon_code', class: Migration20261128104500_order_coupon_code },
  { name: 'Migration20261128105338_session_last_seen', class: Migration20261128105338_session_last_seen },
  { name: 'Migration20261128110000_event_seq', class: Migration20261128110000_event_seq },
  { name: 'Migration20261128110306_email_change', class: Migration20261128110306_email_change },
  { name: 'Migration20261128111500_customers_by_email', class: Migration20261128111500_customers_by_email },
  {
    name: 'Migration20261128124812_staff_two_factor_account_name',
    class: Migration20261128124812_staff_two_factor_account_name,
  },
  { name: 'Migration20261128125122_store_onboarding', class: Migration20261128125122_store_onboarding },
  { name: 'Migration20261128125552_saved_payment_methods', class: Migration20261128125552_saved_payment_methods },
  { name: 'Migration20261128125643_product_plans', class: Migration20261128125643_product_plans },
  { name: 'Migration20261128133711_subscriptions', class: Migration20261128133711_subscriptions },
  {
    name: 'Migration20261128161808_licenses_follow_subscriptions',
    class: Migration20261128161808_licenses_follow_subscriptions,
  },
  { name: 'Migration20261128163021_renewal_orders', class: Migration20261128163021_renewal_orders },
  { name: 'Migration20261128193209_customer_subscriptions', class: Migration20261128193209_customer_subscriptions },
  { name: 'Migration20261128193233_subscription_figures', class: Migration20261128193233_subscription_figures },
  { name: 'Migration20261128195832_license_signing_keys', class: Migration20261128195832_license_signing_keys },
  { name: 'Migration20261128231507_subscription_mrr_months', class: Migration20261128231507_subscription_mrr_months },
  { name: 'Migration20261129051327_tax_and_invoices', class: Migration20261129051327_tax_and_invoices },
  { name: 'Migration20261129052509_tax_report_credit_notes', class: Migration20261129052509_tax_report_credit_notes },
  { name: 'Migration20261129083350_invoice_seller', class: Migration20261129083350_invoice_seller },
];
