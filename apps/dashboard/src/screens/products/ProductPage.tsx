/** Placeholder: replaced by this screen's work (issue 28/29). */
export function ProductPage() {
  return <h1>ProductPage</h1>;
}
