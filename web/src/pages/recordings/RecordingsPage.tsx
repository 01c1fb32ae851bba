// Placeholder until this page is built (issue 15); replaced by its own component.
export function RecordingsPage() {
  return <section><h1>Recordings</h1></section>;
}
