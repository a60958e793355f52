import type pg from 'pg';

export interface OrderShape {
  tokenHash: string;
  number: string;
  shape: {
    order: Record<string, unknown>;
    lines: Array<Record<string, unknown>>;
    events: Array<Record<string, unknown>>;
  };
}

export function orderShape(client: pg.ClientBase, orderId: string): Promise<OrderShape>;
