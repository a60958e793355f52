/**
 * One cleanup stack for the whole run: every child process, database and temp directory a
 * benchmark creates registers its undo here, and the stack runs (newest first) when the
 * benchmark ends, when it fails, on Ctrl-C / SIGTERM, and when the run's time budget is spent.
 */
const stack = [];
let running;

/** Registers `undo` (sync or async); returns a function that runs it now and unregisters it. */
export function onCleanup(label, undo) {
  const entry = { label, undo };
  stack.push(entry);
  return async () => {
    const index = stack.indexOf(entry);
    if (index < 0) return;
    stack.splice(index, 1);
    await undo();
  };
}

/** Runs every registered undo, newest first; never throws (failures are reported). */
export async function cleanupAll() {
  if (running) return running;
  running = (async () => {
    while (stack.length > 0) {
      const { label, undo } = stack.pop();
      try {
        await undo();
      } catch (error) {
        console.error(`cleanup "${label}" failed: ${error?.message ?? error}`);
      }
    }
  })();
  try {
    await running;
  } finally {
    running = undefined;
  }
}

/** Ctrl-C, SIGTERM and a hard deadline all end in cleanupAll() and a non-zero exit. */
export function installExitHandlers({ deadlineMs }) {
  let exiting = false;
  const bail = (why, code) => {
    if (exiting) return;
    exiting = true;
    console.error(`\n${why}: cleaning up`);
    // A cleanup that hangs must not keep the run alive for ever.
    setTimeout(() => process.exit(code), 30_000).unref();
    void cleanupAll().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => bail('interrupted', 130));
  process.on('SIGTERM', () => bail('terminated', 143));
  const deadline = setTimeout(() => bail(`time budget of ${Math.round(deadlineMs / 1000)} s spent`, 124), deadlineMs);
  deadline.unref();
  return () => clearTimeout(deadline);
}
