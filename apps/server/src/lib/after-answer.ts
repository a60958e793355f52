/**
 * Work a request leaves for after its answer, so that how long the answer takes does not tell
 * what the work found: a password-reset link or a sign-in code is written and mailed only when
 * the account exists (and the password was right), and an answer that waited for that writing
 * would say so by its time. The work starts once the current turn of the event loop is over
 * (the answer is on its way), runs with whatever it closes over, and logs its own failure; it is
 * held until it ends, so a shutdown (app.ts, before the database closes) and a test can wait for
 * all of it (`settleAfterAnswer`).
 */

/** The part of a logger a failure is written to. */
interface FailureLog {
  error(fields: object, message: string): void;
}

const pending = new Set<Promise<void>>();

export function afterAnswer(log: FailureLog, what: string, work: () => Promise<void>): void {
  const task: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
    .then(work)
    .catch((error: unknown) => log.error({ err: error }, `${what} failed`))
    .finally(() => pending.delete(task));
  pending.add(task);
}

/** Resolves once every piece of work left so far (and any it left in turn) has ended. */
export async function settleAfterAnswer(): Promise<void> {
  while (pending.size > 0) await Promise.all([...pending]);
}
