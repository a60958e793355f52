/**
 * Lists are tables with column headers. These are read-only tables of links and buttons, so they
 * are native <table>s (Tab reaches each link, a screen reader announces the headers); React Aria's
 * Table is a grid for selection and arrow-key navigation, which no list here has (docs/decisions.md).
 */
import type { ReactNode } from 'react';

export interface ColumnDef<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** Right-aligned figures (money, counts). */
  numeric?: boolean;
}

export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  empty,
}: {
  /** The table's accessible name (shown visually hidden when the heading above says it). */
  caption: string;
  columns: ReadonlyArray<ColumnDef<T>>;
  rows: readonly T[];
  rowKey: (row: T) => string;
  empty: string;
}) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.header} scope="col" className={column.numeric ? 'numeric' : undefined}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} className="muted">
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr key={rowKey(row)}>
                {columns.map((column) => (
                  <td key={column.header} className={column.numeric ? 'numeric' : undefined}>
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
