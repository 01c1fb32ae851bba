// The Usage page (/usage?since=&until=&team=): instance-hours by UTC day, team and environment
// (GET /v0/usage), this UTC month so far by default. A stacked bar chart per environment and
// day, the table with its total, the GPU-hours of experiments by day, team and machine (a second
// table, when there are any), and "Download CSV" (the same range as text/csv, fetched with
// the token and saved: a plain link could not carry it). The platform's operator sees every team's
// usage or picks one; a team's admins and members see their team's.
// data-testid: usage-page, usage-since, usage-until, usage-team, usage-range-error, usage-error,
// usage-total-hours, usage-total-gpu-hours, usage-summary, usage-table, usage-row-<day>-<team>-<env>,
// usage-empty, usage-gpu-table, usage-gpu-row-<day>-<team>-<machine id>, usage-gpu-error,
// usage-download-csv, usage-download-error; UsageChart's.
import { useEffect, useMemo, useState } from "react";
import { useSearchParams } from "react-router-dom";
import { managed, roles, type UsageReport, usagePath } from "../../api/managed";
import { useIdentity } from "../../lib/auth/useSignIn";
import { downloadWithToken } from "../../lib/download";
import { errorText } from "../../lib/errors";
import { formatHours, rangeProblem, sortedRows, thisMonth, usageChart, usageTotals } from "../../lib/usage/usage";
import "../team/team.css";
import "./usage.css";
import { UsageChart } from "./UsageChart";

export function UsagePage() {
  const { who } = useIdentity();
  const isAdmin = roles(who?.role).isOperator; // picks any team
  const [params, setParams] = useSearchParams();
  const month = useMemo(() => thisMonth(), []);
  const since = params.get("since") || month.since;
  const until = params.get("until") || month.until;
  const team = isAdmin ? params.get("team") || "" : "";
  const problem = rangeProblem(since, until);
  const [report, setReport] = useState<UsageReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [teams, setTeams] = useState<string[]>([]);
  const [downloading, setDownloading] = useState(false);
  const [downloadError, setDownloadError] = useState<string | null>(null);

  const change = (name: "since" | "until" | "team", value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next, { replace: true });
  };

  useEffect(() => {
    if (!isAdmin) return;
    let live = true;
    managed.teams()
      .then((listed) => { if (live) setTeams(listed.map((t) => t.name)); })
      .catch(() => { /* the picker then offers "every team" and the teams seen in the answer */ });
    return () => { live = false; };
  }, [isAdmin]);

  useEffect(() => {
    if (problem) return;
    let live = true;
    managed.usage({ since, until, team: team || null })
      .then((body) => { if (live) { setReport(body); setError(null); } })
      .catch((e: unknown) => { if (live) { setReport(null); setError(errorText(e)); } });
    return () => { live = false; };
  }, [since, until, team, problem]);

  const rows = useMemo(() => sortedRows(report?.data ?? []), [report]);
  const totals = useMemo(() => usageTotals(rows), [rows]);
  const chart = useMemo(() => usageChart(rows, since, until), [rows, since, until]);
  const teamChoices = useMemo(() => [...new Set([...teams, ...rows.map((r) => r.team), ...(team ? [team] : [])])].sort(),
    [teams, rows, team]);

  async function downloadCsv() {
    setDownloading(true);
    setDownloadError(null);
    try {
      await downloadWithToken(usagePath({ since, until, team: team || null }, "csv"),
        `usage-${team ? `${team}-` : ""}${since}-${until}.csv`);
    } catch (e) {
      setDownloadError(errorText(e));
    } finally {
      setDownloading(false);
    }
  }

  return (
    <div className="usage-page" data-testid="usage-page">
      <h1>Usage</h1>
      <form className="team-form usage-range" onSubmit={(e) => e.preventDefault()}>
        <label>
          From (UTC)
          <input type="date" data-testid="usage-since" value={since} max={until} onChange={(e) => change("since", e.target.value)} />
        </label>
        <label>
          To (UTC, included)
          <input type="date" data-testid="usage-until" value={until} min={since} onChange={(e) => change("until", e.target.value)} />
        </label>
        {isAdmin ? (
          <label>
            Team
            <select data-testid="usage-team" value={team} onChange={(e) => change("team", e.target.value)}>
              <option value="">every team</option>
              {teamChoices.map((t) => <option key={t} value={t}>{t}</option>)}
            </select>
          </label>
        ) : who ? <p className="muted">Team {who.team}</p> : null}
        <button type="button" data-testid="usage-download-csv" onClick={downloadCsv} disabled={downloading || problem !== null}>
          {downloading ? "Downloading…" : "Download CSV"}
        </button>
      </form>
      {problem ? <p className="error" role="alert" data-testid="usage-range-error">{problem}</p> : null}
      {downloadError ? <p className="error" role="alert" data-testid="usage-download-error">{downloadError}</p> : null}
      {error ? <p className="error" role="alert" data-testid="usage-error">{error}</p> : null}
      {report && !problem ? (
        <>
          <p data-testid="usage-summary">
            <strong data-testid="usage-total-hours">{formatHours(report.total_instance_hours)}</strong> instance-hours
            from {report.since} to {report.until}
            {totals.byEnv.length > 0 ? `, in ${totals.byEnv.length} environment${totals.byEnv.length === 1 ? "" : "s"}` : ""};{" "}
            <strong data-testid="usage-total-gpu-hours">{formatHours(report.total_gpu_hours)}</strong> GPU-hours of experiments.
          </p>
          {report.gpu_hours_error ? <p className="error" role="alert" data-testid="usage-gpu-error">{report.gpu_hours_error}</p> : null}
          <UsageChart chart={chart} />
          {rows.length === 0 ? <p className="muted" data-testid="usage-empty">No sessions ran in this range.</p> : (
            <div className="table-scroll">
              <table className="data-table" data-testid="usage-table">
                <thead>
                  <tr><th>Day (UTC)</th><th>Team</th><th>Environment</th><th className="num">Instance-hours</th><th className="num">Sessions</th></tr>
                </thead>
                <tbody>
                  {rows.map((r) => (
                    <tr key={`${r.day}/${r.team}/${r.env_id}`} data-testid={`usage-row-${r.day}-${r.team}-${r.env_id}`}>
                      <td className="nowrap">{r.day}</td>
                      <td>{r.team}</td>
                      <td><code>{r.env_id}</code></td>
                      <td className="num">{formatHours(r.instance_hours)}</td>
                      <td className="num">{r.sessions}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr><td colSpan={3}>Total</td><td className="num">{formatHours(totals.instanceHours)}</td><td /></tr>
                </tfoot>
              </table>
            </div>
          )}
          {report.gpu_data.length > 0 ? (
            <div className="table-scroll">
              <table className="data-table" data-testid="usage-gpu-table">
                <thead>
                  <tr><th>Day (UTC)</th><th>Team</th><th>Machine</th><th className="num">GPU-hours</th><th className="num">Experiments</th></tr>
                </thead>
                <tbody>
                  {report.gpu_data.map((g) => (
                    <tr key={`${g.day}/${g.team}/${g.machine_id}`} data-testid={`usage-gpu-row-${g.day}-${g.team}-${g.machine_id}`}>
                      <td className="nowrap">{g.day}</td>
                      <td>{g.team}</td>
                      <td>{g.machine_name} <code>{g.machine_id}</code></td>
                      <td className="num">{formatHours(g.gpu_hours)}</td>
                      <td className="num">{g.experiments}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr><td colSpan={3}>Total</td><td className="num">{formatHours(report.total_gpu_hours)}</td><td /></tr>
                </tfoot>
              </table>
            </div>
          ) : null}
        </>
      ) : null}
    </div>
  );
}
