/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Blacklist() {
  return <h1>Blacklist</h1>;
}
