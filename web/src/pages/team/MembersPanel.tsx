// The Team page's members (/v0/members?team=): who belongs to the team and with which role.
// Admins add a member (subject and role) and remove one after a confirmation; members see the
// list only.
// data-testid: members-panel, members-error, members-table, member-row-<subject>,
// member-role-<subject>, member-subject, member-role, member-add, member-add-error,
// member-remove-<subject>, remove-member-dialog (-confirm, -cancel, -error).
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { managed, type MemberPublic, type Role } from "../../api/managed";
import { errorText } from "../../lib/errors";
import { whenText } from "../../lib/team/team";
import { ConfirmDialog } from "../../components/ConfirmDialog";

interface Props {
  team: string;
  isAdmin: boolean;
}

export function MembersPanel({ team, isAdmin }: Props) {
  const [members, setMembers] = useState<MemberPublic[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [subject, setSubject] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [adding, setAdding] = useState(false);
  const [addError, setAddError] = useState<string | null>(null);
  const [toRemove, setToRemove] = useState<MemberPublic | null>(null);
  const [removing, setRemoving] = useState(false);
  const [removeError, setRemoveError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setMembers((await managed.members(team)).filter((m) => m.team === team));
      setError(null);
    } catch (e) {
      setMembers([]);
      setError(errorText(e));
    }
  }, [team]);

  useEffect(() => { void load(); }, [load]);

  async function add(event: FormEvent) {
    event.preventDefault();
    if (!subject.trim()) {
      setAddError("who? their subject, as the identity provider names them");
      return;
    }
    setAdding(true);
    setAddError(null);
    try {
      await managed.addMember({ subject: subject.trim(), team, role });
      setSubject("");
      await load();
    } catch (e) {
      setAddError(errorText(e));
    } finally {
      setAdding(false);
    }
  }

  async function remove() {
    if (!toRemove) return;
    setRemoving(true);
    setRemoveError(null);
    try {
      await managed.removeMember(toRemove.subject);
      setToRemove(null);
      await load();
    } catch (e) {
      setRemoveError(errorText(e));
    } finally {
      setRemoving(false);
    }
  }

  return (
    <section className="panel team-section" data-testid="members-panel" aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      {isAdmin ? (
        <form className="team-form" onSubmit={add}>
          <label>
            Subject
            <input data-testid="member-subject" value={subject} placeholder="alice@example.com"
              onChange={(e) => setSubject(e.target.value)} />
          </label>
          <label>
            Role
            <select data-testid="member-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
              <option value="member">member</option>
              <option value="admin">admin</option>
            </select>
          </label>
          <button type="submit" className="primary" data-testid="member-add" disabled={adding}>{adding ? "Adding…" : "Add member"}</button>
        </form>
      ) : <p className="muted">Only admins add or remove members.</p>}
      {addError ? <p className="error" role="alert" data-testid="member-add-error">{addError}</p> : null}
      {error ? <p className="error" role="alert" data-testid="members-error">{error}</p> : null}
      {members !== null && members.length === 0 && !error ? <p className="muted" data-testid="members-empty">No members yet.</p> : null}
      {members !== null && members.length > 0 ? (
        <div className="table-scroll">
          <table className="data-table" data-testid="members-table">
            <thead><tr><th>Subject</th><th>Role</th><th>Added</th>{isAdmin ? <th /> : null}</tr></thead>
            <tbody>
              {members.map((m) => (
                <tr key={m.subject} data-testid={`member-row-${m.subject}`}>
                  <td><code>{m.subject}</code></td>
                  <td data-testid={`member-role-${m.subject}`}>{m.role}</td>
                  <td className="nowrap" title={`by ${m.added_by}`}>{whenText(m.created_at)}</td>
                  {isAdmin ? (
                    <td>
                      <button type="button" className="danger-outline" data-testid={`member-remove-${m.subject}`}
                        onClick={() => { setRemoveError(null); setToRemove(m); }}>Remove</button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <ConfirmDialog open={toRemove !== null} title="Remove this member?" confirmLabel="Remove" busyLabel="Removing…"
        busy={removing} error={removeError} testId="remove-member-dialog" onConfirm={remove}
        onCancel={() => { setToRemove(null); setRemoveError(null); }}>
        <p><code>{toRemove?.subject}</code> will no longer be a member of team <strong>{team}</strong>.</p>
      </ConfirmDialog>
    </section>
  );
}
