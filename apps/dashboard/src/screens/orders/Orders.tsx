/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Orders() {
  return <h1>Orders</h1>;
}
