// Placeholder until this page is built (issue 15); replaced by its own component.
export function EnvironmentsPage() {
  return <section><h1>Environments</h1></section>;
}
