/** The events module's raw SQL. */

/**
 * The INSERT of one event row, for a statement that writes it beside other rows (the checkout's
 * one-statement order insert). Only the outbox (outbox.ts `eventInsert`) builds it.
 */
export function eventRowInsert(row: { id: string; storeId: string; type: string; payload: Record<string, unknown>; at: Date; dispatchedAt: Date | null }): { sql: string; params: unknown[] } {
  return {
    sql: `insert into event (id, store_id, type, payload, created_at, dispatched_at) values (?, ?, ?, ?::jsonb, ?, ?)`,
    params: [row.id, row.storeId, row.type, JSON.stringify(row.payload), row.at, row.dispatchedAt],
  };
}
