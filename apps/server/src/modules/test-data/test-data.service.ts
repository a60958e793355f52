/**
 * Deleting a store's test data (test mode: docs/architecture.md): a request queues a job (one waiting or
 * running per store: asking again answers that one), `svc serve` runs it in the background
 * (runTestDataWipes, a scheduled job of jobs.ts), and its status is read by id.
 *
 * The run deletes table by table, children first, in batches of WIPE_BATCH rows, each batch in its
 * own short transaction (no lock is held longer than one batch's DELETE), and every DELETE names
 * `livemode = false` (test-data.repo.ts): live rows are never touched. The stored files of test
 * products and payment proofs, and test products' images, are removed from storage before their
 * rows. A runner holds the job under a lease it moves on with every batch; a runner that died
 * leaves a lease that runs out, and the next runner takes the job over where the rows say it
 * stopped (each batch's count is recorded in the batch's transaction).
 */
import { ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TTestDataJob } from '@svc/schemas';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../lib/errors.js';
import { describeFailure } from '../../lib/failures.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/timestamps.js';
import type { ServiceContext } from '../request/context.js';
import {
  STEPS_AFTER_FILES,
  STEPS_AFTER_PRODUCTS,
  STEPS_BEFORE_FILES,
  claimWipe,
  deleteTestRowsById,
  findActiveWipe,
  findWipe,
  finishWipe,
  insertWipe,
  recordBatch,
  releaseWipe,
  renewLease,
  selectTestFiles,
  selectTestProducts,
  type StoredObjects,
  type WipeRow,
  type WipeStep,
} from './test-data.repo.js';

/** Rows per DELETE: small enough that a batch's locks last milliseconds, large enough that 100,000 orders take few round trips. */
export const WIPE_BATCH = 2_000;
/** How long a runner holds a job between two batches; past it the runner is taken for dead. */
export const WIPE_LEASE_MS = 60_000;
/** Passes over the tables before giving up when a test row appeared under a deleted parent (a test checkout during the wipe). */
const MAX_PASSES = 3;

function jobOf(row: WipeRow): TTestDataJob {
  return {
    id: row.id,
    storeId: row.store_id,
    status: row.status,
    deleted: Object.fromEntries(Object.entries(row.deleted).map(([table, n]) => [table, Number(n)])),
    error: row.error,
    createdAt: iso(row.created_at),
    startedAt: row.started_at === null ? null : iso(row.started_at),
    finishedAt: row.finished_at === null ? null : iso(row.finished_at),
  };
}

/** The merchant routes are for test keys only: a live key never starts or reads a wipe. */
export function requireTestMode(ctx: ServiceContext): void {
  if (ctx.livemode)
    throw new AppError(
      'test_key_required',
      'Deleting test data takes a test-mode key (sk_test_...); this key is live.',
    );
}

/**
 * Queues a wipe of the store's test data, or answers the one that waits or runs already.
 * `requestedBy`: `user:<id>` or `api_key:<id>`.
 */
export async function requestTestDataWipe(
  ctx: ServiceContext,
  input: { storeId: string },
  requestedBy: string,
): Promise<TTestDataJob> {
  // Twice at most: the active wipe can finish between a refused insert and the read.
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await insertWipe(ctx.em, {
      id: newId(),
      storeId: input.storeId,
      requestedBy,
      now: ctx.clock.now(),
    });
    if (inserted) return jobOf(inserted);
    const active = await findActiveWipe(ctx.em, input.storeId);
    if (active) return jobOf(active);
  }
  throw new AppError('conflict', 'A wipe of this store’s test data just finished; ask again.');
}

/** One of the store's wipes; another store's, or none, is 404. */
export async function getTestDataWipe(ctx: ServiceContext, input: { storeId: string; jobId: string }) {
  const row = await findWipe(ctx.em, input.storeId, input.jobId);
  if (!row) throw new AppError('not_found', 'No such test data job.');
  return jobOf(row);
}

class LeaseLost extends Error {}

export interface WipeRunOptions {
  batch?: number;
  leaseMs?: number;
  /** Stops between two batches (the process shutting down): the job is given back. */
  signal?: AbortSignal;
}

/** One job under its runner's lease. */
class WipeRun {
  private lease: Date;
  private readonly batch: number;
  private readonly leaseMs: number;

  constructor(
    private readonly deps: AppDeps,
    private readonly job: WipeRow,
    lease: Date,
    private readonly options: WipeRunOptions,
  ) {
    this.lease = lease;
    this.batch = options.batch ?? WIPE_BATCH;
    this.leaseMs = options.leaseMs ?? WIPE_LEASE_MS;
  }

  private get storeId(): string {
    return this.job.store_id;
  }

  private stopping(): boolean {
    return this.options.signal?.aborted ?? false;
  }

  /** One transaction: the batch's delete and its count (or the lease moved on when there was nothing). */
  private async inBatch(table: string, remove: (em: EntityManager) => Promise<number>): Promise<number> {
    const nextLease = new Date(this.deps.clock.now().getTime() + this.leaseMs);
    const count = await this.deps.orm.em.fork().transactional(async (em) => {
      const n = await remove(em);
      const held =
        n > 0
          ? await recordBatch(em, { id: this.job.id, lease: this.lease, nextLease, table, count: n })
          : await renewLease(em, { id: this.job.id, lease: this.lease, nextLease });
      if (!held) throw new LeaseLost();
      return n;
    });
    this.lease = nextLease;
    return count;
  }

  /** Deletes the table's test rows batch by batch; false when stopped before the end. */
  private async runStep(step: WipeStep): Promise<boolean> {
    for (;;) {
      if (this.stopping()) return false;
      const n = await this.inBatch(step.table, (em) => step.deleteBatch(em, this.storeId, this.batch));
      if (n < this.batch) return true;
    }
  }

  /** Files or products: their stored objects first (a crash after leaves rows the next run deletes), then their rows. */
  private async runStoredStep(
    table: 'file' | 'product',
    select: (em: EntityManager, storeId: string, limit: number) => Promise<StoredObjects[]>,
  ): Promise<boolean> {
    for (;;) {
      if (this.stopping()) return false;
      const found = await select(this.deps.orm.em.fork(), this.storeId, this.batch);
      for (const object of found) for (const key of object.keys) await this.deps.storage.remove(key);
      const ids = found.map((object) => object.id);
      await this.inBatch(table, (em) =>
        ids.length === 0 ? Promise.resolve(0) : deleteTestRowsById(em, table, this.storeId, ids),
      );
      if (found.length < this.batch) return true;
    }
  }

  /** One pass over every table, children first; false when stopped. */
  private async pass(): Promise<boolean> {
    for (const step of STEPS_BEFORE_FILES) if (!(await this.runStep(step))) return false;
    if (!(await this.runStoredStep('file', selectTestFiles))) return false;
    for (const step of STEPS_AFTER_FILES) if (!(await this.runStep(step))) return false;
    if (!(await this.runStoredStep('product', selectTestProducts))) return false;
    for (const step of STEPS_AFTER_PRODUCTS) if (!(await this.runStep(step))) return false;
    return true;
  }

  /** Runs the job to its end (or until stopped, or its lease was lost). */
  async run(): Promise<void> {
    const em = () => this.deps.orm.em.fork();
    try {
      for (let pass = 1; ; pass++) {
        try {
          if (!(await this.pass())) {
            await releaseWipe(em(), { id: this.job.id, lease: this.lease, now: this.deps.clock.now() });
            return;
          }
          break;
        } catch (error) {
          // A test checkout during the wipe added a row under a parent a later step deletes: go round again.
          if (!(error instanceof ForeignKeyConstraintViolationException) || pass >= MAX_PASSES) throw error;
        }
      }
      await finishWipe(em(), {
        id: this.job.id,
        lease: this.lease,
        status: 'succeeded',
        error: null,
        now: this.deps.clock.now(),
      });
    } catch (error) {
      if (error instanceof LeaseLost) {
        this.deps.log.warn({ job: this.job.id }, 'test data wipe: lease lost; another runner has it');
        return;
      }
      this.deps.log.error({ err: error, job: this.job.id, storeId: this.storeId }, 'test data wipe failed');
      await finishWipe(em(), {
        id: this.job.id,
        lease: this.lease,
        status: 'failed',
        error: describeFailure(error).slice(0, 500),
        now: this.deps.clock.now(),
      });
    }
  }
}

/**
 * Takes and runs wipes until none waits (a scheduled job of `svc serve`, jobs.ts). Safe with
 * several processes: each takes a different job, and a job whose runner died is taken over once
 * its lease runs out. Returns how many it ran.
 */
export async function runTestDataWipes(ctx: ServiceContext, options: WipeRunOptions = {}): Promise<number> {
  const { deps } = ctx;
  let ran = 0;
  while (!options.signal?.aborted) {
    const now = deps.clock.now();
    const lease = new Date(now.getTime() + (options.leaseMs ?? WIPE_LEASE_MS));
    const job = await claimWipe(deps.orm.em.fork(), { now, lease });
    if (!job) break;
    await new WipeRun(deps, job, lease, options).run();
    ran++;
  }
  return ran;
}
