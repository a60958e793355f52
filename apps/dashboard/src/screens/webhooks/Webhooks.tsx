/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Webhooks() {
  return <h1>Webhooks</h1>;
}
