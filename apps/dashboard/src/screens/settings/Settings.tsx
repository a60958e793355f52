/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Settings() {
  return <h1>Settings</h1>;
}
