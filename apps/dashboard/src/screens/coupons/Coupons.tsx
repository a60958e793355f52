/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Coupons() {
  return <h1>Coupons</h1>;
}
