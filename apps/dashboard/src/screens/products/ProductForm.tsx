/** Placeholder: replaced by this screen's work (issue 28/29). */
export function NewProduct() {
  return <h1>NewProduct</h1>;
}
