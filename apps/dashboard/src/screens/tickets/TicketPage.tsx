/** Placeholder: replaced by this screen's work (issue 28/29). */
export function TicketPage() {
  return <h1>TicketPage</h1>;
}
