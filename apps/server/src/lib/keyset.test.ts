import { describe, expect, it } from 'vitest';
import { KeysetWhere } from './keyset.js';

describe('KeysetWhere', () => {
  it("writes the list's conditions, then the cursor's row-value comparison, with parameters in order", () => {
    const where = new KeysetWhere('o.store_id = ?', 's1')
      .and('o.status = ?', 'paid')
      .before({ us: '1795285912473123', id: 'x' }, 'o.created_at', 'o.id');
    expect(where.sql).toBe(
      `o.store_id = ? and o.status = ? and (o.created_at, o.id) < (timestamptz 'epoch' + (?::bigint) * interval '1 microsecond', ?)`,
    );
    expect(where.params).toEqual(['s1', 'paid', '1795285912473123', 'x']);
  });

  it('adds nothing without a position, and conditions without parameters', () => {
    const where = new KeysetWhere('p.store_id = ?', 's1').and('k.order_id is not null').before(undefined, 'a', 'b');
    expect(where.sql).toBe('p.store_id = ? and k.order_id is not null');
    expect(where.params).toEqual(['s1']);
  });
});
