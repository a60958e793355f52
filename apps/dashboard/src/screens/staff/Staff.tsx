/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Staff() {
  return <h1>Staff</h1>;
}
