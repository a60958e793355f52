/** Plain-text output: aligned tables, fixed decimals, ratios with their targets. */

export function fixed(value, digits = 1) {
  return Number.isFinite(value) ? value.toFixed(digits) : String(value);
}

/** Rows of objects as an aligned text table, in `columns` order: [{ key, label, format?, align? }]. */
export function table(rows, columns) {
  const cells = rows.map((row) =>
    columns.map((column) => (column.format ? column.format(row[column.key], row) : String(row[column.key]))),
  );
  const widths = columns.map((column, i) => Math.max(column.label.length, ...cells.map((line) => line[i].length)));
  const pad = (text, i) => (columns[i].align === 'left' ? text.padEnd(widths[i]) : text.padStart(widths[i]));
  const out = [
    columns.map((column, i) => pad(column.label, i)).join('  '),
    widths.map((width) => '-'.repeat(width)).join('  '),
  ];
  for (const line of cells) out.push(line.map(pad).join('  '));
  return out.join('\n');
}

/** The usual columns for a load result (see lib/load.mjs). */
export const LOAD_COLUMNS = [
  { key: 'name', label: 'case', align: 'left', format: (v, row) => (row.contaminated ? `${v} *` : v) },
  { key: 'rps', label: 'req/s', format: (v) => fixed(v, 0) },
  { key: 'p50', label: 'p50 ms', format: (v) => fixed(v, 1) },
  { key: 'p99', label: 'p99 ms', format: (v) => fixed(v, 1) },
  { key: 'non2xx', label: 'non-2xx', format: String },
  { key: 'errors', label: 'errors', format: (v, row) => String(v + row.timeouts) },
  { key: 'peakRssMiB', label: 'peak RSS MiB', format: (v) => fixed(v, 0) },
  { key: 'serverCpuMsPerRequest', label: 'server CPU ms/req', format: (v) => fixed(v, 2) },
  { key: 'postgresCpuMsPerRequest', label: 'pg CPU ms/req', format: (v) => fixed(v, 2) },
  { key: 'transactionsPerRequest', label: 'pg stmts/req', format: (v) => fixed(v, 2) },
  {
    key: 'cpu',
    label: 'cores: server/pg/load/other',
    format: (v) => [v.server, v.postgres, v.load, v.other].map((x) => fixed(x, 2)).join('/'),
  },
];

/** `label: 1.23 (target <= 1.2: met)` */
export function ratioLine(label, value, target) {
  let verdict = '';
  if (target) {
    const met = target.op === '<=' ? value <= target.value : value >= target.value;
    verdict = ` (target ${target.op} ${target.value}${target.note ? `, ${target.note}` : ''}: ${met ? 'met' : 'NOT met'})`;
  }
  return `${label}: ${fixed(value, 2)}${verdict}`;
}

export function heading(text) {
  return `\n== ${text} ${'='.repeat(Math.max(0, 76 - text.length))}`;
}

export function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}
