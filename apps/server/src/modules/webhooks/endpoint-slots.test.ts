/**
 * What a dispatcher holds of each endpoint (endpoint-slots.ts), without a database: the hold
 * limit of a fast, a slow and an unknown endpoint, the order waiting attempts start in, and the
 * window a claim across endpoints may take. The dispatcher's behaviour with it is scheduler.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import type { ClaimedAttempt } from './claims.repo.js';
import { EndpointSlots, subjectOf } from './endpoint-slots.js';

let next = 0;
const attempt = (webhookId: string): ClaimedAttempt => ({
  id: `del_${++next}`,
  // Due in the order made: the queues keep it.
  dueAt: new Date(next),
  webhookId,
  storeId: 'store',
  livemode: true,
  eventId: `evt_${next}`,
  event: 'order.created',
  attempt: 1,
  url: 'http://127.0.0.1:9/hook',
  secretEnc: 'sealed',
  enabled: true,
  events: ['order.created'],
  payload: {},
  eventCreatedAt: new Date(0),
  lease: new Date(60_000),
});

describe('EndpointSlots', () => {
  it('lets only an endpoint that answers fast hold more than its slots', () => {
    const slots = new EndpointSlots(2, 8);
    expect(slots.holdLimit('unknown')).toBe(2);
    slots.recordSpeed('fast', 20);
    slots.recordSpeed('slow', 5_000);
    expect(slots.holdLimit('fast')).toBe(8);
    expect(slots.holdLimit('slow')).toBe(2);
    // A moving average: one slow answer among fast ones does not make an endpoint slow at once.
    slots.recordSpeed('fast', 2_000);
    expect(slots.holdLimit('fast')).toBe(8);
  });

  it('starts waiting attempts endpoint by endpoint in claim order, never more than the slots of one, and stops when told there is no room', () => {
    const slots = new EndpointSlots(2, 8);
    const a = [attempt('a'), attempt('a'), attempt('a')];
    const b = [attempt('b')];
    for (const held of [...a, ...b]) slots.hold(held);
    expect(slots.waitingCount).toBe(4);
    expect(slots.held('a')).toBe(3);

    const started: string[] = [];
    for (const ready of slots.startable(() => started.length < 10)) {
      slots.started(ready.webhookId);
      started.push(ready.id);
    }
    expect(started).toEqual([a[0]!.id, b[0]!.id, a[1]!.id]);
    expect(slots.waitingCount).toBe(1);
    expect(slots.held('a')).toBe(3);

    // Its slot freed, the third of `a` starts; with no room, nothing does.
    slots.finished('a');
    expect([...slots.startable(() => false)]).toEqual([]);
    expect([...slots.startable(() => true)].map((held) => held.id)).toEqual([a[2]!.id]);
    expect(slots.waitingCount).toBe(0);
  });

  it('gives a claim across endpoints the window that caps each at its hold limit, and hands back what waits', () => {
    const slots = new EndpointSlots(2, 8);
    slots.recordSpeed('fast', 20);
    slots.recordSpeed('slow', 5_000);
    slots.hold(attempt('fast'));
    slots.started('slow');
    slots.started('slow');
    expect(slots.claimWindow()).toEqual({
      saturated: ['slow'],
      offsets: { slow: 2 + 8 - 2, fast: 1 },
      defaultOffset: 6,
      slotsPerEndpoint: 8,
    });
    slots.hold(attempt('slow'));
    expect(slots.dropWaiting('slow').map((held) => held.webhookId)).toEqual(['slow']);
    expect(slots.releaseAll().map((held) => held.webhookId)).toEqual(['fast']);
    expect(slots.waitingCount).toBe(0);
  });

  it('sends the events of one subject to an endpoint one at a time, in queue order, others meanwhile', () => {
    const slots = new EndpointSlots(4, 16);
    const about = (id: string, orderId: string, event: string): ClaimedAttempt => ({
      ...attempt('a'),
      id,
      event,
      payload: { order: { id: orderId } },
      dueAt: new Date(1_000),
    });
    const paid = about('d1', 'o1', 'order.paid');
    const completed = about('d2', 'o1', 'order.completed');
    const other = about('d3', 'o2', 'order.paid');
    // Claims brought them out of order: the queue puts them back in (due, id) order.
    slots.hold(other);
    slots.hold(completed);
    slots.hold(paid);

    const start = () => {
      const ids: string[] = [];
      for (const held of slots.startable(() => true)) {
        slots.started(held.webhookId, subjectOf(held));
        ids.push(held.id);
      }
      return ids;
    };
    // The second of o1 waits for the first to be answered, though the endpoint has free slots.
    expect(start()).toEqual(['d1', 'd3']);
    expect(start()).toEqual([]);
    slots.finished('a', 'o1');
    expect(start()).toEqual(['d2']);
    expect(subjectOf({ event: 'webhook.test', payload: {} })).toBeNull();
  });
});
