/**
 * An order as stored: its row, its lines and its events, with what differs between two honest
 * orders (ids, number, times, token hash) taken out, so the service's and the checkout floor's
 * orders of one cart compare equal (bench/checkout.mjs before measuring, test/checkout-floor.test.ts).
 */

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** `client`: a connected pg client on the database that holds the order. */
export async function orderShape(client, orderId) {
  const order = (await client.query(`select * from "order" where id = $1`, [orderId])).rows[0];
  const lines = (await client.query(`select * from order_line where order_id = $1 order by position`, [orderId])).rows;
  const events = (
    await client.query(`select * from event where payload->'order'->>'id' = $1 order by created_at`, [orderId])
  ).rows;
  check(order, `order ${orderId} exists`);
  const { id, number, store_id, checkout_token_hash, created_at, updated_at, ...rest } = order;
  check(created_at.getTime() === updated_at.getTime(), `order ${orderId}: created_at = updated_at`);
  return {
    tokenHash: checkout_token_hash,
    number,
    shape: {
      order: rest,
      lines: lines.map(({ id: lineId, order_id, product_id, ...line }) => ({
        ...line,
        ownOrder: order_id === id,
        idLength: lineId.length,
      })),
      // dispatched_at is set later by the service's webhook dispatcher, not by checkout.
      events: events.map(({ id: eventId, store_id: eventStore, created_at: at, payload, dispatched_at, ...event }) => {
        const { id: pid, orderId: publicNumber, storeId, createdAt, updatedAt, ...detail } = payload.order;
        return {
          ...event,
          eventIdPrefix: eventId.slice(0, 4),
          sameStore: eventStore === store_id && storeId === store_id,
          sameOrder: pid === id && publicNumber === `ORD-${number}`,
          sameTimes:
            at.getTime() === created_at.getTime() && createdAt === created_at.toISOString() && updatedAt === createdAt,
          detail,
        };
      }),
    },
  };
}
