// The log the page holds: the text received, keeping the last LOG_KEEP_CHARS characters (a long
// training run writes megabytes; the page is for watching it). What is dropped is cut at a line
// and counted, so the page can say so; the whole log stays on the platform
// (`GET /v0/experiments/{id}/logs?offset=N`).

export interface LogText {
  text: string;
  /** characters dropped from the start */
  dropped: number;
}

export const LOG_KEEP_CHARS = 2_000_000;
export const EMPTY_LOG: LogText = { text: "", dropped: 0 };

export function appendLog(log: LogText, more: string, keep: number = LOG_KEEP_CHARS): LogText {
  if (!more) return log;
  const text = log.text + more;
  if (text.length <= keep) return { text, dropped: log.dropped };
  const from = text.length - keep;
  const lineStart = text.indexOf("\n", from);
  const cut = lineStart >= 0 && lineStart < text.length - 1 ? lineStart + 1 : from;
  return { text: text.slice(cut), dropped: log.dropped + cut };
}
