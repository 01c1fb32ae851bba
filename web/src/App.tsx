// The app's shell: the navigation and one route per page. Each page lives in pages/<name>/;
// later parts (robots, agents, Doom, teams) add their routes here and their pages beside these.
import { NavLink, Route, Routes } from "react-router-dom";
import { ComparisonPage } from "./pages/comparisons/ComparisonPage";
import { ComparisonsPage } from "./pages/comparisons/ComparisonsPage";
import { EnvironmentsPage } from "./pages/environments/EnvironmentsPage";
import { NotFoundPage } from "./pages/NotFoundPage";
import { RecordingsPage } from "./pages/recordings/RecordingsPage";
import { ReplayPage } from "./pages/replay/ReplayPage";
import { SessionPage } from "./pages/session/SessionPage";

export function App() {
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
