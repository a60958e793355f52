/** Sessions slide while used and die when not, measured on a clock the test moves. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../apps/server/src/lib/clock.js';
import { startInProcess, type InProcessApp } from './support/in-process.js';
import { registerSeller } from './support/seller.js';

const DAY = 24 * 3600_000;
let app: InProcessApp;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  app = await startInProcess({ clock });
});
afterAll(() => app?.close());

const session = (cookie: string) => fetch(`${app.url}/api/auth/session`, { headers: { cookie } });

describe('seller session lifetime', () => {
  it('slides the 30-day expiry at most once a day while used', async () => {
    const seller = await registerSeller(app.url);
    clock.advance(DAY / 2);
    const early = await session(seller.cookie);
    expect(early.status).toBe(200);
    expect(early.headers.getSetCookie()).toEqual([]); // not yet a day old: no write, no new cookie
    clock.advance(DAY);
    const later = await session(seller.cookie);
    expect(later.status).toBe(200);
    expect(
      later.headers.getSetCookie().some((c) => c.startsWith('svc_session=') && c.includes('Max-Age=2592000')),
    ).toBe(true);
    // Kept alive by use every 20 days, it outlives the first 30.
    for (let i = 0; i < 3; i++) {
      clock.advance(20 * DAY);
      expect((await session(seller.cookie)).status).toBe(200);
    }
  });

  it('ends a session unused for 30 days', async () => {
    const seller = await registerSeller(app.url);
    clock.advance(30 * DAY + 1000);
    const response = await session(seller.cookie);
    expect(response.status).toBe(401);
    expect((await response.json()).code).toBe('unauthorized');
  });
});
