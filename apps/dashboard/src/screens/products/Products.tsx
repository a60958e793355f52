/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Products() {
  return <h1>Products</h1>;
}
