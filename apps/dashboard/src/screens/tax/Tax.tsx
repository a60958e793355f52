/**
 * Tax: the tax report of a period (two UTC days, this quarter by default, both kept in the URL):
 * per country, rate and reverse charge, the taxable amount and the tax of the invoices paid in it
 * less the credit notes issued in it, with totals, and the same rows as a CSV download (what a
 * one-stop-shop return needs). Needs viewOrders, as the API does.
 */
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState } from 'react';
import { downloadFile, trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { buttonClass } from '../../ui/button';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { formatMoney } from '../../ui/format';
import { Card, PageHeader } from '../../ui/layout';
import { DataTable } from '../../ui/table';
import { periodProblem, periodQuery, quarterOf } from './period';

const taxRoute = getRouteApi('/app/stores/$storeId/tax');

type TaxReport = RouterOutputs['reports']['tax'];
type TaxRow = TaxReport['rows'][number];

const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 3 });

const DESCRIPTION = 'Taxable amount and tax per country and rate, credit notes subtracted.';

/** The period's two days; the report is asked for once the seller chooses `Show`. */
function PeriodForm({
  from,
  to,
  onShow,
}: {
  from: string;
  to: string;
  onShow: (period: { from: string; to: string }) => void;
}) {
  const [start, setStart] = useState(from);
  const [end, setEnd] = useState(to);
  const problem = periodProblem(start, end);
  return (
    <form
      className="toolbar"
      aria-label="Period"
      onSubmit={(event) => {
        event.preventDefault();
        if (start && end && !problem) onShow({ from: start, to: end });
      }}
    >
      <div className="field">
        <label htmlFor="tax-from">From</label>
        <input
          id="tax-from"
          type="date"
          required
          value={start}
          max={end || undefined}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? 'tax-period-error' : undefined}
          onChange={(event) => setStart(event.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor="tax-to">To</label>
        <input
          id="tax-to"
          type="date"
          required
          value={end}
          min={start || undefined}
          aria-describedby="tax-to-hint"
          onChange={(event) => setEnd(event.target.value)}
        />
        <span id="tax-to-hint" className="hint">
          Included. Days are UTC.
        </span>
      </div>
      <button type="submit" className={buttonClass('secondary')} disabled={problem !== undefined}>
        Show
      </button>
      {problem && (
        <p id="tax-period-error" role="alert" className="field-error">
          {problem}
        </p>
      )}
    </form>
  );
}

function ReportTable({ report }: { report: TaxReport }) {
  return (
    <DataTable<TaxRow>
      caption="Tax by country and rate"
      bare
      rows={report.rows}
      rowKey={(row) => `${row.country}:${row.rate}:${row.reverseCharge}:${row.currency}`}
      empty="No invoices or credit notes in this period."
      columns={[
        { header: 'Country', cell: (row) => row.country },
        { header: 'Rate', numeric: true, cell: (row) => percent.format(row.rate) },
        { header: 'Reverse charge', cell: (row) => (row.reverseCharge ? 'Yes' : 'No') },
        { header: 'Taxable', numeric: true, cell: (row) => formatMoney(row.taxable, row.currency) },
        { header: 'Tax', numeric: true, cell: (row) => formatMoney(row.tax, row.currency) },
        { header: 'Invoices', numeric: true, cell: (row) => row.invoices },
        { header: 'Credit notes', numeric: true, cell: (row) => row.creditNotes },
      ]}
      footer={report.totals.map((total) => ({
        key: total.currency,
        label: report.totals.length > 1 ? `Total (${total.currency})` : 'Total',
        cells: [
          null,
          null,
          formatMoney(total.taxable, total.currency),
          formatMoney(total.tax, total.currency),
          null,
          null,
        ],
      }))}
    />
  );
}

export function Tax() {
  const storeId = useStoreId();
  const { store, can } = useStore();
  const allowed = can('viewOrders');
  const search = taxRoute.useSearch();
  const navigate = taxRoute.useNavigate();
  // This quarter unless the URL says otherwise.
  const quarter = quarterOf(new Date());
  const from = search.from ?? quarter.from;
  const to = search.to ?? quarter.to;
  const period = periodQuery(from, to);
  const report = useQuery(
    trpc.reports.tax.queryOptions({ storeId, ...period }, { enabled: allowed, placeholderData: keepPreviousData }),
  );
  const csvUrl = `/api/dashboard/stores/${encodeURIComponent(storeId)}/reports/tax?${new URLSearchParams({ ...period, format: 'csv' })}`;
  const download = useMutation({ mutationFn: () => downloadFile(csvUrl, `tax-report-${from}-${to}.csv`) });

  if (store && !allowed) {
    return (
      <>
        <PageHeader title="Tax" description={DESCRIPTION} />
        <p>The tax report needs the viewOrders permission, which you do not have in this store.</p>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title="Tax"
        description={DESCRIPTION}
        actions={
          <button
            type="button"
            className={buttonClass('secondary')}
            disabled={download.isPending}
            onClick={() => download.mutate()}
          >
            Download CSV
          </button>
        }
      />
      <ErrorNote error={download.error} />
      <p className="muted">
        Invoices count on the day they were paid, credit notes on the day of the refund, whenever their invoice was
        paid. An order with lines at two rates (an e-book at a reduced rate) counts in both rows.
      </p>
      {/* Keyed by the period, so the fields show the URL's days after Back or a shared link. */}
      <PeriodForm key={`${from}:${to}`} from={from} to={to} onShow={(next) => void navigate({ search: next })} />
      <Card id="tax-report-heading" title="Tax by country and rate" flush>
        <Loaded query={report} label="Loading the tax report…">
          {(data) => <ReportTable report={data} />}
        </Loaded>
      </Card>
    </>
  );
}
