// The Team page (/team, `?team=<name>` for the operator): the team's quotas, its members and its
// API tokens. The platform's operator picks any team, makes teams and edits quotas; the operator
// and a team's admins add or remove members and set whether members may make API tokens; members
// see their own team, read-only where the API forbids changes. Each
// section shows the gateway's reason when it refuses (a platform without teams, a member asking
// for another team).
// data-testid: team-page, team-name, team-role, team-picker, team-new-name, team-create,
// team-signed-in-as, team-create-error; QuotaPanel's, MembersPanel's and TokensPanel's.
import { type FormEvent, useCallback, useEffect, useMemo, useState } from "react";
import { useSearchParams } from "react-router-dom";
import { managed, roles, type TeamPublic } from "../../api/managed";
import { useIdentity } from "../../lib/auth/useSignIn";
import { errorText } from "../../lib/errors";
import { signedInAs } from "../../lib/team/team";
import { MembersPanel } from "./MembersPanel";
import { QuotaPanel } from "./QuotaPanel";
import { TokensPanel } from "./TokensPanel";
import "./team.css";

export function TeamPage() {
  const { who, how } = useIdentity();
  const { isOperator, managesTeam } = roles(who?.role);
  const [params, setParams] = useSearchParams();
  const [teams, setTeams] = useState<TeamPublic[] | null>(null);
  const [teamsError, setTeamsError] = useState<string | null>(null);
  const [newName, setNewName] = useState("");
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<string | null>(null);

  const ownTeam = who?.team ?? "default";
  const team = isOperator ? params.get("team") || ownTeam : ownTeam;

  const load = useCallback(async () => {
    try {
      setTeams(await managed.teams());
      setTeamsError(null);
    } catch (e) {
      setTeams(null);
      setTeamsError(errorText(e));
    }
  }, []);

  useEffect(() => { void load(); }, [load]);

  const names = useMemo(() => [...new Set([ownTeam, team, ...(teams ?? []).map((t) => t.name)])].sort(), [ownTeam, team, teams]);
  const row = teams?.find((t) => t.name === team) ?? null;

  const pick = (name: string) => setParams(name === ownTeam ? {} : { team: name }, { replace: true });

  async function createTeam(event: FormEvent) {
    event.preventDefault();
    const name = newName.trim();
    if (!name) return setCreateError("name the team");
    setCreating(true);
    setCreateError(null);
    try {
      await managed.createTeam({ name });
      setNewName("");
      await load();
      pick(name);
    } catch (e) {
      setCreateError(errorText(e));
    } finally {
      setCreating(false);
    }
  }

  const saved = (changed: TeamPublic) => {
    setTeams((listed) => {
      const others = (listed ?? []).filter((t) => t.name !== changed.name);
      return [...others, changed].sort((a, b) => (a.name < b.name ? -1 : 1));
    });
  };

  return (
    <div className="team-page" data-testid="team-page">
      <header className="team-header">
        <h1>Team <span data-testid="team-name">{team}</span></h1>
        <p className="muted" data-testid="team-role">
          {who ? <>Signed in as <strong data-testid="team-signed-in-as">{signedInAs(who)}</strong>: {who.role} of team {who.team}</> : null}
          {how?.mode === "managed" ? ". Each team sees only its own sessions, recordings and usage." : "."}
        </p>
        {isOperator ? (
          <div className="team-admin-row">
            <label>
              Team
              <select data-testid="team-picker" value={team} onChange={(e) => pick(e.target.value)}>
                {names.map((n) => <option key={n} value={n}>{n}</option>)}
              </select>
            </label>
            <form className="team-form inline" onSubmit={createTeam}>
              <label>
                New team
                <input data-testid="team-new-name" value={newName} placeholder="ml-research" pattern="[a-z0-9][a-z0-9\-]{0,62}"
                  title="lower-case letters, digits and '-'" onChange={(e) => setNewName(e.target.value)} />
              </label>
              <button type="submit" data-testid="team-create" disabled={creating}>{creating ? "Making…" : "Make team"}</button>
            </form>
          </div>
        ) : null}
        {createError ? <p className="error" role="alert" data-testid="team-create-error">{createError}</p> : null}
      </header>
      <QuotaPanel key={`quota-${team}`} name={team} team={row} error={teamsError} isOperator={isOperator}
        managesTeam={managesTeam} onSaved={saved} />
      <MembersPanel key={`members-${team}`} team={team} isAdmin={managesTeam} />
      <TokensPanel key={`tokens-${team}`} team={team} who={who} />
    </div>
  );
}
