/** Placeholder: replaced by this screen's work (issue 28/29). */
export function Home() {
  return <h1>Home</h1>;
}
