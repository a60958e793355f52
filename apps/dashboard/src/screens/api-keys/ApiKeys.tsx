/** Placeholder: replaced by this screen's work (issue 28/29). */
export function ApiKeys() {
  return <h1>ApiKeys</h1>;
}
