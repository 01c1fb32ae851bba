// Help around the pasted SSH command and the platform's key: a hint while typing (the gateway's
// 422 is the authority; these only say early what it will say), and the line that appends the
// platform's key to a machine's authorized_keys.

export interface Hint {
  text: string;
  /** true: do not send it (a private key was pasted) */
  blocks: boolean;
}

export const EXAMPLE_COMMAND = "ssh root@203.0.113.7 -p 22045 -i ~/.ssh/id_ed25519";

/** What to say about the text in the command field, or null when there is nothing to add. */
export function sshCommandHint(pasted: string): Hint | null {
  const text = pasted.trim().replace(/^\$\s+/, "");
  if (!text) return null;
  if (/PRIVATE KEY-----/.test(text)) {
    return { text: "That is a private key: never paste it anywhere. The platform logs in with its own key; paste the ssh command your provider shows.", blocks: true };
  }
  if (/^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-\S+)\s+AAAA/.test(text)) {
    return { text: "That is a public key, not a command: paste the ssh command your provider shows (the platform's own key is above).", blocks: false };
  }
  if (/^gcloud\b/.test(text)) {
    return { text: "gcloud's command is not SSH: run it with --dry-run and paste the ssh line it prints.", blocks: false };
  }
  if (/\bssh\.runpod\.io\b/.test(text)) {
    return { text: "RunPod's ssh.runpod.io proxy is not a full SSH connection: paste the pod's \"SSH over exposed TCP\" command.", blocks: false };
  }
  if (/^(scp|sftp|rsync|mosh)\b/.test(text)) {
    return { text: "Paste the ssh command that logs in to the machine, not a file copy or another tool.", blocks: false };
  }
  if (!/^(ssh\b|ssh:\/\/)/.test(text)) {
    return { text: `Paste the whole command, starting with ssh: e.g. ${EXAMPLE_COMMAND}`, blocks: false };
  }
  return null;
}

/** `text` as one single-quoted shell word. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** The command that adds the platform's key for the user it logs in as. */
export function appendKeyCommand(authorizedKeysLine: string): string {
  return `mkdir -p ~/.ssh && chmod 700 ~/.ssh && echo ${shellQuote(authorizedKeysLine.trim())} >> ~/.ssh/authorized_keys && chmod 600 ~/.ssh/authorized_keys`;
}
