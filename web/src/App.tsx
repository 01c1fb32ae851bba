// The app's shell: the navigation and one route per page. Each page lives in pages/<name>/;
// later parts (robots, agents, Doom) add their routes here and their pages beside these.
// A platform that needs a token shows only the sign-in page until one is accepted
// (lib/auth/useSignIn.ts): while signed out every path redirects to /sign-in?next=<path>, and
// /sign-in/callback finishes a sign-in through the identity provider (lib/auth/oidc.ts).
// data-testid: signed-in-as, sign-out, nav-<page> on some links (nav-machines, nav-experiments, nav-evals, nav-usage, ...).
import { useCallback, useState } from "react";
import { Navigate, NavLink, Route, Routes, useLocation, useSearchParams } from "react-router-dom";
import { ComparisonPage } from "./pages/comparisons/ComparisonPage";
import { ComparisonsPage } from "./pages/comparisons/ComparisonsPage";
import { EnvironmentsPage } from "./pages/environments/EnvironmentsPage";
import { NotFoundPage } from "./pages/NotFoundPage";
import { RecordingsPage } from "./pages/recordings/RecordingsPage";
import { ReplayPage } from "./pages/replay/ReplayPage";
import { SessionPage } from "./pages/session/SessionPage";
import { OidcCallbackPage } from "./pages/signin/OidcCallbackPage";
import { EpisodesPage } from "./pages/episodes/EpisodesPage";
import { MachinesPage } from "./pages/machines/MachinesPage";
import { ExperimentPage } from "./pages/experiments/ExperimentPage";
import { ExperimentsPage } from "./pages/experiments/ExperimentsPage";
import { NewExperimentPage } from "./pages/experiments/NewExperimentPage";
import { EvalComparePage } from "./pages/evals/EvalComparePage";
import { EvalPage } from "./pages/evals/EvalPage";
import { EvalsPage } from "./pages/evals/EvalsPage";
import { NewEvalPage } from "./pages/evals/NewEvalPage";
import { RunPage } from "./pages/runs/RunPage";
import { RunsPage } from "./pages/runs/RunsPage";
import { SnapshotsPage } from "./pages/snapshots/SnapshotsPage";
import { SignInPage } from "./pages/signin/SignInPage";
import { TeamPage } from "./pages/team/TeamPage";
import { UsagePage } from "./pages/usage/UsagePage";
import { safeNext } from "./lib/auth/oidc";
import { IdentityContext, useSignIn } from "./lib/auth/useSignIn";
import { signedInAs } from "./lib/team/team";

/** Any path while signed out: the sign-in page, remembering where the visitor was going. */
function ToSignIn() {
  const location = useLocation();
  const next = `${location.pathname}${location.search}${location.hash}`;
  return <Navigate to={next === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(next)}`} replace />;
}

/** /sign-in once signed in: on to where the visitor was going. */
function AfterSignIn({ after }: { after: string | null }) {
  const [params] = useSearchParams();
  return <Navigate to={safeNext(params.get("next") ?? after)} replace />;
}

export function App() {
  const { state, signIn, signOut } = useSignIn();
  const [after, setAfter] = useState<string | null>(null);
  const signInWithProvider = useCallback((token: string, next: string) => {
    setAfter(next);
    return signIn(token);
  }, [signIn]);

  if (state.phase === "checking") return <p className="muted app-main">Loading…</p>;
  if (state.phase === "signed-out") {
    return (
      <div className="app">
        <header className="app-header"><span className="brand">Simulusion</span></header>
        <main className="app-main">
          <Routes>
            <Route path="/sign-in" element={<SignInPage how={state.how} reason={state.reason} onSignIn={signIn} />} />
            <Route path="/sign-in/callback" element={<OidcCallbackPage onSignIn={signInWithProvider} />} />
            <Route path="*" element={<ToSignIn />} />
          </Routes>
        </main>
      </div>
    );
  }
  const identity = { who: state.who, how: state.how };
  return (
    <IdentityContext.Provider value={identity}>
      <div className="app">
        <header className="app-header">
          <span className="brand">Simulusion</span>
          <nav aria-label="Main">
            <NavLink to="/" end>Environments</NavLink>
            <NavLink to="/recordings">Recordings</NavLink>
            <NavLink to="/episodes" data-testid="nav-episodes">Episodes</NavLink>
            <NavLink to="/snapshots" data-testid="nav-snapshots">Snapshots</NavLink>
            <NavLink to="/comparisons">Comparisons</NavLink>
            <NavLink to="/machines" data-testid="nav-machines">Machines</NavLink>
            <NavLink to="/experiments" data-testid="nav-experiments">Experiments</NavLink>
            <NavLink to="/runs" data-testid="nav-runs">Runs</NavLink>
            <NavLink to="/evals" data-testid="nav-evals">Evals</NavLink>
            <NavLink to="/usage" data-testid="nav-usage">Usage</NavLink>
            <NavLink to="/team" data-testid="nav-team">Team</NavLink>
            <a href="/docs">API</a>
          </nav>
          {state.phase === "signed-in" ? (
            <span className="signed-in">
              <span className="muted" data-testid="signed-in-as" title={`Signed in as ${signedInAs(state.who)}: ${state.who.role} of team ${state.who.team}`}>
                {signedInAs(state.who)} ({state.who.role}, {state.who.team})
              </span>
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
            <Route path="/episodes" element={<EpisodesPage />} />
            <Route path="/snapshots" element={<SnapshotsPage />} />
            <Route path="/comparisons" element={<ComparisonsPage />} />
            <Route path="/comparisons/:comparisonId" element={<ComparisonPage />} />
            <Route path="/team" element={<TeamPage />} />
            <Route path="/machines" element={<MachinesPage />} />
            <Route path="/experiments" element={<ExperimentsPage />} />
            <Route path="/experiments/new" element={<NewExperimentPage />} />
            <Route path="/experiments/:experimentId" element={<ExperimentPage />} />
            <Route path="/runs" element={<RunsPage />} />
            <Route path="/runs/:runId" element={<RunPage />} />
            <Route path="/evals" element={<EvalsPage />} />
            <Route path="/evals/new" element={<NewEvalPage />} />
            <Route path="/evals/compare" element={<EvalComparePage />} />
            <Route path="/evals/:evalId" element={<EvalPage />} />
            <Route path="/usage" element={<UsagePage />} />
            <Route path="/sign-in" element={<AfterSignIn after={after} />} />
            <Route path="/sign-in/callback" element={<AfterSignIn after={after} />} />
            <Route path="*" element={<NotFoundPage />} />
          </Routes>
        </main>
      </div>
    </IdentityContext.Provider>
  );
}
