// Placeholder until this page is built (issue 15); replaced by its own component.
export function ReplayPage() {
  return <section><h1>Replay</h1></section>;
}
