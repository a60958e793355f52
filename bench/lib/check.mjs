/** A benchmark's own assertion: a run whose set-up or answers are not as expected cannot be trusted. */
export function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}
