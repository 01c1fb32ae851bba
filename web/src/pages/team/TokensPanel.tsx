// The Team page's API tokens (/v0/tokens): make one (name, role, expiry) and see its secret once;
// the team's tokens with when they were made, last used and expire; revoke one after a
// confirmation (it is refused from then on, and so is every token it made). Members make member
// tokens of their own team (unless its admin turned that off) and see and revoke their own;
// a team's admins make admin or member tokens of their team; the platform's operator any role,
// for the team shown.
// data-testid: tokens-panel, tokens-error, token-name, token-role, token-expiry, token-create,
// token-create-error, tokens-table, token-row-<id>, token-state-<id>, token-last-used-<id>,
// token-revoke-<id>, revoke-dialog (-confirm, -cancel, -error); SecretOnceBox's.
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { api, apiError, must } from "../../api/client";
import { roles } from "../../api/managed";
import { errorText } from "../../lib/errors";
import type { Identity } from "../../lib/auth/useSignIn";
import {
  DEFAULT_EXPIRY_DAYS, EXPIRY_CHOICES, type SecretOnce, secretOnce, tokenBody, type TokenPublic, tokenState, whenText,
  type TokenRole, withoutSecret,
} from "../../lib/team/team";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { SecretOnceBox } from "../../components/SecretOnceBox";

interface Props {
  team: string;
  who: Identity | null;
}

export function TokensPanel({ team, who }: Props) {
  const { isOperator, managesTeam: isAdmin } = roles(who?.role);
  const [tokens, setTokens] = useState<TokenPublic[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [role, setRole] = useState<TokenRole>("member");
  const [expiry, setExpiry] = useState<number | null>(DEFAULT_EXPIRY_DAYS);
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<string | null>(null);
  const [shown, setShown] = useState<SecretOnce | null>(null);
  const [toRevoke, setToRevoke] = useState<TokenPublic | null>(null);
  const [revoking, setRevoking] = useState(false);
  const [revokeError, setRevokeError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const body = await must(api.GET("/v0/tokens"));
      setTokens(body.tokens);
      setError(null);
    } catch (e) {
      setTokens([]);
      setError(errorText(e));
    }
  }, []);

  useEffect(() => { void load(); }, [load]);

  async function create(event: FormEvent) {
    event.preventDefault();
    const made = tokenBody({ name, role, expiresInDays: expiry, team: isOperator && team !== who?.team ? team : null });
    if ("problem" in made) {
      setCreateError(made.problem);
      return;
    }
    setCreating(true);
    setCreateError(null);
    try {
      const created = await must(api.POST("/v0/tokens", { body: made.body }));
      setShown(secretOnce(created));
      setTokens((listed) => [...(listed ?? []), withoutSecret(created)]);
      setName("");
    } catch (e) {
      setCreateError(errorText(e));
    } finally {
      setCreating(false);
    }
  }

  async function revoke() {
    if (!toRevoke) return;
    setRevoking(true);
    setRevokeError(null);
    const { data, error: body, response } = await api.DELETE("/v0/tokens/{token_id}", {
      params: { path: { token_id: toRevoke.id } },
    });
    setRevoking(false);
    if (!response.ok || !data) {
      setRevokeError(apiError(response, body).detail);
      return;
    }
    setTokens((listed) => (listed ?? []).map((t) => (t.id === data.id ? data : t)));
    if (shown?.id === data.id) setShown(null);
    setToRevoke(null);
  }

  const now = Date.now() / 1000;
  const ofTeam = (tokens ?? []).filter((t) => t.team === team).reverse(); // newest first
  const ownToken = who?.subject;

  return (
    <section className="panel team-section" data-testid="tokens-panel" aria-labelledby="tokens-title">
      <h2 id="tokens-title">API tokens</h2>
      <p className="muted">
        For scripts and the SDK (<code>PLATFORM_TOKEN</code>). A token acts for team <strong>{team}</strong> with its role.
        One made with an API token expires with it at the latest and is revoked with it.
        {isAdmin ? null : " You see the tokens you made."}
      </p>
      <form className="team-form" onSubmit={create}>
        <label>
          Name
          <input data-testid="token-name" value={name} maxLength={200} placeholder="training cluster"
            onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Role
          <select data-testid="token-role" value={role} onChange={(e) => setRole(e.target.value as TokenRole)}
            disabled={!isAdmin} title={isAdmin ? undefined : "Only admins make admin tokens"}>
            <option value="member">member</option>
            {isAdmin ? <option value="admin">admin</option> : null}
            {isOperator ? <option value="operator">operator</option> : null}
          </select>
        </label>
        <label>
          Expires after
          <select data-testid="token-expiry" value={expiry === null ? "never" : String(expiry)}
            onChange={(e) => setExpiry(e.target.value === "never" ? null : Number(e.target.value))}>
            {EXPIRY_CHOICES.map((c) => (
              <option key={c.label} value={c.days === null ? "never" : String(c.days)}>{c.label}</option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary" data-testid="token-create" disabled={creating}>
          {creating ? "Making…" : "Make token"}
        </button>
      </form>
      {createError ? <p className="error" role="alert" data-testid="token-create-error">{createError}</p> : null}
      {shown ? (
        <SecretOnceBox secret={shown.secret} prefix="token" label="The new token's secret" onDone={() => setShown(null)}>
          Token <strong>{shown.name}</strong> (<code>{shown.id}</code>) was made. Copy its secret now:
        </SecretOnceBox>
      ) : null}
      {error ? <p className="error" role="alert" data-testid="tokens-error">{error}</p> : null}
      {tokens !== null && ofTeam.length === 0 && !error ? <p className="muted" data-testid="tokens-empty">No API tokens yet.</p> : null}
      {ofTeam.length > 0 ? (
        <div className="table-scroll">
          <table className="data-table" data-testid="tokens-table">
            <thead>
              <tr><th>Name</th><th>ID</th><th>Role</th><th>Made</th><th>Last used</th><th>Expires</th><th>State</th><th /></tr>
            </thead>
            <tbody>
              {ofTeam.map((t) => {
                const state = tokenState(t, now);
                return (
                  <tr key={t.id} data-testid={`token-row-${t.id}`} className={state === "active" ? undefined : "inactive"}>
                    <td>{t.name}{t.id === ownToken ? <span className="muted"> (this browser)</span> : null}</td>
                    <td><code>{t.id}</code></td>
                    <td>{t.role}</td>
                    <td className="nowrap" title={`by ${t.owner}`}>{whenText(t.created_at)}</td>
                    <td className="nowrap" data-testid={`token-last-used-${t.id}`}>{t.last_used_at === null ? "never" : whenText(t.last_used_at)}</td>
                    <td className="nowrap">{t.expires_at === null ? "never" : whenText(t.expires_at)}</td>
                    <td data-testid={`token-state-${t.id}`}>
                      <span className={`status status-${state}`}>{state === "revoked" ? `revoked ${whenText(t.revoked_at)}` : state}</span>
                    </td>
                    <td>
                      {state === "revoked" ? null : (
                        <button type="button" className="danger-outline" data-testid={`token-revoke-${t.id}`}
                          onClick={() => { setRevokeError(null); setToRevoke(t); }}>Revoke</button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      <ConfirmDialog open={toRevoke !== null} title="Revoke this API token?" confirmLabel="Revoke" busyLabel="Revoking…"
        busy={revoking} error={revokeError} testId="revoke-dialog" onConfirm={revoke}
        onCancel={() => { setToRevoke(null); setRevokeError(null); }}>
        <p>
          Token <strong>{toRevoke?.name}</strong> (<code>{toRevoke?.id}</code>) will be refused from now on, by every
          script that uses it. This cannot be undone.
        </p>
        {toRevoke && toRevoke.id === ownToken ? (
          <p className="error">This browser is signed in with it: you will be signed out.</p>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}
