/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Licenses() {
  return <h1>Licenses</h1>;
}
