/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Customers() {
  return <h1>Customers</h1>;
}
