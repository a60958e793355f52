/**
 * Reports over a store's orders, for merchants (a key with order:read) and the dashboard (a member
 * with viewOrders), each declared once (storeResource): the tax report, as JSON or CSV.
 */
import { ZTaxReport, ZTaxReportQuery } from '@svc/schemas';
import { storeResource, router } from '../../trpc/procedures.js';
import { taxReport, taxReportCsv, taxReportFilename } from '../../modules/tax/tax-report.service.js';

const MERCHANT = '/merchant/v1/stores/{storeId}/reports';
const tags = ['merchant: reports'];
const dashboard = { tags: ['dashboard'] };

const read = storeResource({ scope: 'order:read', permission: 'viewOrders' });

export const reportsRouter = router({
  tax: read
    .meta({
      openapi: {
        method: 'GET',
        path: `${MERCHANT}/tax`,
        tags,
        summary: 'Tax report: taxable amount and tax per country and rate over a period, credit notes subtracted',
        description:
          'The invoices paid in `[from, to)` less the credit notes issued in it (whenever their invoice was paid), ' +
          "grouped by the tax country, the line's rate, reverse charge and currency: what a one-stop-shop return " +
          'needs. An order whose lines have two rates (an e-book at a reduced rate beside a standard line) counts in ' +
          'both rows. The period is at most 400 days. JSON by default; `format=csv` answers the same rows as ' +
          '`text/csv` (a header line `country,rate,reverse_charge,currency,taxable,tax,invoices,credit_notes`, ' +
          "CRLF line ends, no totals line) as an attachment. Objects of the credential's mode only.",
      },
      dashboard,
      csv: { render: taxReportCsv, filename: taxReportFilename },
      errors: [],
    })
    .input(ZTaxReportQuery)
    .output(ZTaxReport)
    .query(({ ctx, input }) => taxReport(ctx, input)),
});
