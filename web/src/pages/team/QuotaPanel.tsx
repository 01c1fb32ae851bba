// The Team page's quotas (/v0/teams): open sessions against max_sessions, and this UTC month's
// instance-hours against instance_hours_per_month (empty: no limit). The platform's operator edits
// both (PATCH /v0/teams/{name}; an empty field clears the limit). The team's setting "Members may
// make API tokens" (members_mint_tokens): a checkbox for the operator and the team's admins, text
// for members.
// data-testid: quota-panel, quota-error, quota-sessions, quota-hours, quota-edit, quota-max-sessions,
// quota-instance-hours, quota-save, quota-cancel, quota-save-error, team-members-mint-tokens,
// team-members-mint-tokens-text, team-setting-error.
import { type FormEvent, useState } from "react";
import { managed, type TeamPublic } from "../../api/managed";
import { errorText } from "../../lib/errors";
import { formatHours } from "../../lib/usage/usage";
import { quotaText, quotaValue } from "../../lib/team/team";

interface Props {
  /** The team shown; `team` is its row, null when it has none (no quota set: no limit). */
  name: string;
  team: TeamPublic | null;
  error: string | null;
  /** The platform's operator: edits quotas. */
  isOperator: boolean;
  /** The operator or the team's admin: sets members_mint_tokens. */
  managesTeam: boolean;
  onSaved: (team: TeamPublic) => void;
}

function asText(value: number | null): string {
  return value === null ? "" : String(value);
}

export function QuotaPanel({ name, team, error, isOperator, managesTeam, onSaved }: Props) {
  const [editing, setEditing] = useState(false);
  const [sessions, setSessions] = useState("");
  const [hours, setHours] = useState("");
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [setting, setSetting] = useState(false);
  const [settingError, setSettingError] = useState<string | null>(null);
  const membersMint = team?.members_mint_tokens ?? true;

  async function setMembersMint(value: boolean) {
    setSetting(true);
    setSettingError(null);
    try {
      onSaved(await managed.updateTeam(name, { members_mint_tokens: value }));
    } catch (e) {
      setSettingError(errorText(e));
    } finally {
      setSetting(false);
    }
  }

  function edit() {
    setSessions(asText(team?.max_sessions ?? null));
    setHours(asText(team?.instance_hours_per_month ?? null));
    setSaveError(null);
    setEditing(true);
  }

  async function save(event: FormEvent) {
    event.preventDefault();
    const maxSessions = quotaValue(sessions, true);
    const perMonth = quotaValue(hours, false);
    if ("problem" in maxSessions) return setSaveError(`Max sessions: ${maxSessions.problem}`);
    if ("problem" in perMonth) return setSaveError(`Instance-hours per month: ${perMonth.problem}`);
    setSaving(true);
    setSaveError(null);
    try {
      onSaved(await managed.updateTeam(name, { max_sessions: maxSessions.value, instance_hours_per_month: perMonth.value }));
      setEditing(false);
    } catch (e) {
      setSaveError(errorText(e));
    } finally {
      setSaving(false);
    }
  }

  return (
    <section className="panel team-section" data-testid="quota-panel" aria-labelledby="quota-title">
      <h2 id="quota-title">Quotas</h2>
      {error ? <p className="error" role="alert" data-testid="quota-error">{error}</p> : null}
      {team ? (
        <dl className="quota-list">
          <dt>Sessions open</dt>
          <dd data-testid="quota-sessions">
            {team.open_sessions} of {team.max_sessions === null ? "no limit" : team.max_sessions}
          </dd>
          <dt>Instance-hours this month (UTC)</dt>
          <dd data-testid="quota-hours">
            {formatHours(team.instance_hours_this_month)} of {quotaText(team.instance_hours_per_month, "per month")}
          </dd>
        </dl>
      ) : null}
      {!team && !error ? <p className="muted" data-testid="quota-none">Team {name} has no quotas set: no limit.</p> : null}
      {isOperator && !editing && !error ? (
        <button type="button" data-testid="quota-edit" onClick={edit}>Edit quotas</button>
      ) : null}
      {!isOperator ? <p className="muted">Only the platform's operator changes quotas.</p> : null}
      {editing ? (
        <form className="team-form" onSubmit={save}>
          <label>
            Max sessions at once
            <input data-testid="quota-max-sessions" inputMode="numeric" value={sessions} placeholder="no limit"
              onChange={(e) => setSessions(e.target.value)} />
          </label>
          <label>
            Instance-hours per month
            <input data-testid="quota-instance-hours" inputMode="decimal" value={hours} placeholder="no limit"
              onChange={(e) => setHours(e.target.value)} />
          </label>
          <button type="submit" className="primary" data-testid="quota-save" disabled={saving}>{saving ? "Saving…" : "Save"}</button>
          <button type="button" data-testid="quota-cancel" onClick={() => setEditing(false)} disabled={saving}>Cancel</button>
        </form>
      ) : null}
      {saveError ? <p className="error" role="alert" data-testid="quota-save-error">{saveError}</p> : null}
      {managesTeam && !error ? (
        <label className="team-setting">
          <input type="checkbox" data-testid="team-members-mint-tokens" checked={membersMint} disabled={setting}
            onChange={(e) => void setMembersMint(e.target.checked)} />
          Members may make API tokens
        </label>
      ) : null}
      {!managesTeam && !error ? (
        <p className="muted" data-testid="team-members-mint-tokens-text">
          {membersMint ? "Members may make API tokens." : "The team's admin turned off API tokens made by members."}
        </p>
      ) : null}
      {settingError ? <p className="error" role="alert" data-testid="team-setting-error">{settingError}</p> : null}
    </section>
  );
}
