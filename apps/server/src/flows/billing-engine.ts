/**
 * The billing engine (docs/decisions.md, #39 The billing engine): in `svc serve` and in every
 * `svc worker`, it claims live subscriptions whose next move is due (`FOR UPDATE SKIP LOCKED`
 * under a lease, subscriptions.repo.ts), runs each one's due moves (flows/renew-subscription.ts)
 * and sleeps until the next due time off the due index, or a poll interval at most: no busy
 * polling of the table. Any number may run: a claim is one process's until its lease runs out, and
 * each step is exactly-once by its own design (one order per period, idempotent charges).
 */
import type { AppDeps } from '../deps.js';
import { serviceContext } from '../modules/request/context.js';
import { claimDueSubscriptions, selectNextDue } from '../modules/subscriptions/subscriptions.repo.js';
import { runNextMove } from './renew-subscription.js';

/** Subscriptions claimed at once, and run side by side (each step takes a connection or two). */
const BATCH = 100;
const PARALLEL = 8;
/** A subscription's moves due at once (a notice and its period end long overdue) run in one claim, up to this. */
const MOVES_PER_CLAIM = 8;
const MIN_WAIT_MS = 1_000;

export interface BillingEngineOptions {
  /** Look for due work at least this often (new subscriptions fall due without a wake-up); BILLING_POLL_MS by default. */
  pollMs?: number;
  batch?: number;
  parallel?: number;
}

export interface BillingPass {
  claimed: number;
  moved: number;
  failed: number;
}

export class BillingEngine {
  private readonly pollMs: number;
  private readonly batch: number;
  private readonly parallel: number;
  private running = false;
  private loop: Promise<void> | undefined;
  private signal: (() => void) | undefined;

  constructor(
    private readonly deps: AppDeps,
    options: BillingEngineOptions = {},
  ) {
    this.pollMs = options.pollMs ?? deps.config.billingPollMs;
    this.batch = options.batch ?? BATCH;
    this.parallel = options.parallel ?? PARALLEL;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops claiming; the steps in flight finish (their charges and outcomes are recorded). */
  async stop(): Promise<void> {
    this.running = false;
    this.signal?.();
    await this.loop;
  }

  /** Claims and runs until nothing is due now. */
  async runOnce(): Promise<BillingPass> {
    const pass: BillingPass = { claimed: 0, moved: 0, failed: 0 };
    for (;;) {
      const now = this.deps.clock.now();
      const leaseMs = this.deps.config.billingLeaseMs;
      const ids = await claimDueSubscriptions(
        this.deps.orm.em.fork(),
        now,
        new Date(now.getTime() + leaseMs),
        this.batch,
      );
      pass.claimed += ids.length;
      // The claim is this engine's while its lease lasts; what it has not started by (nearly) then
      // it leaves to the next claim, whoever makes it, rather than run beside it.
      const claimEnds = now.getTime() + leaseMs * 0.8;
      let next = 0;
      const lane = async () => {
        while (next < ids.length && this.deps.clock.now().getTime() < claimEnds) {
          const id = ids[next++]!;
          try {
            for (let moves = 0; moves < MOVES_PER_CLAIM; moves++) {
              const outcome = await runNextMove(serviceContext(this.deps), id, { claimed: true });
              if (outcome === 'moved' || outcome === 'more') pass.moved++;
              if (outcome !== 'more') break;
            }
          } catch (error) {
            // Its lease runs out and the next pass takes it again (the step is safe to rerun).
            pass.failed++;
            this.deps.log.error({ err: error, subscriptionId: id }, 'billing step failed');
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.parallel, ids.length) }, lane));
      if (ids.length < this.batch) break;
    }
    return pass;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let wait = this.pollMs;
      try {
        await this.runOnce();
        const due = await selectNextDue(this.deps.orm.em.fork());
        // At least a second: a due row still leased by a crashed step is not claimable until its lease runs out.
        if (due) wait = Math.max(MIN_WAIT_MS, Math.min(wait, due.getTime() - this.deps.clock.now().getTime()));
      } catch (error) {
        this.deps.log.error({ err: error }, 'billing engine pass failed');
      }
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.signal = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.signal = undefined;
    }
  }
}
