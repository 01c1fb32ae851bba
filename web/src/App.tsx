// The app's shell: the navigation and one route per page. Each page lives in pages/<name>/;
// later parts (robots, agents, Doom, teams) add their routes here and their pages beside these.
// A platform that needs a token shows only the sign-in page until one is accepted
// (lib/auth/useSignIn.ts). data-testid: signed-in-as, sign-out.
import { NavLink, Route, Routes } from "react-router-dom";
import { ComparisonPage } from "./pages/comparisons/ComparisonPage";
import { ComparisonsPage } from "./pages/comparisons/ComparisonsPage";
import { EnvironmentsPage } from "./pages/environments/EnvironmentsPage";
import { NotFoundPage } from "./pages/NotFoundPage";
import { RecordingsPage } from "./pages/recordings/RecordingsPage";
import { ReplayPage } from "./pages/replay/ReplayPage";
import { SessionPage } from "./pages/session/SessionPage";
import { SignInPage } from "./pages/signin/SignInPage";
import { useSignIn } from "./lib/auth/useSignIn";

export function App() {
  const { state, signIn, signOut } = useSignIn();
  if (state.phase === "checking") return <p className="muted app-main">Loading…</p>;
  if (state.phase === "signed-out") {
    return (
      <div className="app">
        <header className="app-header"><span className="brand">Simulusion</span></header>
        <main className="app-main"><SignInPage how={state.how} reason={state.reason} onSignIn={signIn} /></main>
      </div>
    );
  }
  return (
    <div className="app">
      <header className="app-header">
        <span className="brand">Simulusion</span>
        <nav aria-label="Main">
          <NavLink to="/" end>Environments</NavLink>
          <NavLink to="/recordings">Recordings</NavLink>
          <NavLink to="/comparisons">Comparisons</NavLink>
          <a href="/docs">API</a>
        </nav>
        {state.phase === "signed-in" ? (
          <span className="signed-in">
            <span className="muted" data-testid="signed-in-as">{state.who.subject} ({state.who.role}, {state.who.team})</span>
            <button type="button" data-testid="sign-out" onClick={signOut}>Sign out</button>
          </span>
        ) : null}
      </header>
      <main className="app-main">
        <Routes>
          <Route path="/" element={<EnvironmentsPage />} />
          <Route path="/sessions/:sessionId" element={<SessionPage />} />
          <Route path="/recordings" element={<RecordingsPage />} />
          <Route path="/recordings/:recordingId" element={<ReplayPage />} />
          <Route path="/comparisons" element={<ComparisonsPage />} />
          <Route path="/comparisons/:comparisonId" element={<ComparisonPage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </main>
    </div>
  );
}
