/** Placeholder: replaced by this screen's work (issue 28/29). */
export function OrderPage() {
  return <h1>OrderPage</h1>;
}
