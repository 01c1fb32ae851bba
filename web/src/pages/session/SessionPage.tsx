// Placeholder until this page is built (issue 15); replaced by its own component.
export function SessionPage() {
  return <section><h1>Session</h1></section>;
}
