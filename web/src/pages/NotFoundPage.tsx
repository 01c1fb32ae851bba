import { Link, useLocation } from "react-router-dom";

export function NotFoundPage() {
  const location = useLocation();
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no page at <code>{location.pathname}</code>. Go to the <Link to="/">environments</Link> or
        the <Link to="/recordings">recordings</Link>.
      </p>
    </section>
  );
}
