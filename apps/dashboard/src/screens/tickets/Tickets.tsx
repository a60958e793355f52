/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Tickets() {
  return <h1>Tickets</h1>;
}
