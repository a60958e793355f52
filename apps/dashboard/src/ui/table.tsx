/**
 * Lists are tables with column headers. These are read-only tables of links and buttons, so they
 * are native <table>s (Tab reaches each link, a screen reader announces the headers); React Aria's
 * Table is a grid for selection and arrow-key navigation, which no list here has (docs/decisions.md).
 * A table scrolls inside its own frame, so a phone never scrolls the page sideways; an empty one
 * says what to do next in its one row.
 */
import type { ReactNode } from 'react';

export interface ColumnDef<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** Right-aligned figures (money, counts). */
  numeric?: boolean;
  /** Text that may wrap (names, messages); other cells keep to one line and the table scrolls. */
  wrap?: boolean;
}

export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  empty,
  bare = false,
  footer = [],
}: {
  /** The table's accessible name (shown visually hidden when the heading above says it). */
  caption: string;
  columns: ReadonlyArray<ColumnDef<T>>;
  rows: readonly T[];
  rowKey: (row: T) => string;
  /** The one row of an empty table: a sentence, or an EmptyState with its action. */
  empty: ReactNode;
  /** Inside a card that is its frame already: no border of its own. */
  bare?: boolean;
  /**
   * Summary rows under the body (totals): each a row header (`label`, in the first column) and one
   * cell per other column, null where the column has no total.
   */
  footer?: ReadonlyArray<{ key: string; label: string; cells: ReadonlyArray<ReactNode> }>;
}) {
  return (
    <div className={bare ? 'min-w-0 overflow-x-auto' : 'table-wrap'}>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.header} scope="col" className={`whitespace-nowrap ${column.numeric ? 'numeric' : ''}`}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} className="text-muted">
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr key={rowKey(row)} className="hover:bg-surface">
                {columns.map((column) => (
                  <td
                    key={column.header}
                    className={`${column.numeric ? 'numeric' : ''} ${column.wrap ? 'min-w-48' : 'whitespace-nowrap'}`}
                  >
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
        {rows.length > 0 && footer.length > 0 && (
          <tfoot>
            {footer.map((row) => (
              <tr key={row.key} className="font-semibold">
                <th scope="row" className="whitespace-nowrap">
                  {row.label}
                </th>
                {row.cells.map((cell, i) => (
                  <td
                    key={columns[i + 1]?.header ?? i}
                    className={`whitespace-nowrap ${columns[i + 1]?.numeric ? 'numeric' : ''}`}
                  >
                    {cell}
                  </td>
                ))}
              </tr>
            ))}
          </tfoot>
        )}
      </table>
    </div>
  );
}
