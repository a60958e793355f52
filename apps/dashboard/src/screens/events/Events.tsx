/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Events() {
  return <h1>Events</h1>;
}
