// The log's auto-scroll: it follows new lines while the reader is at the bottom, and stops when
// they scroll up (to read something), until they scroll back down or click Follow.

/** Within `slack` pixels of the bottom counts as at the bottom (a fraction of a line rounds). */
export function isAtBottom(box: { scrollTop: number; clientHeight: number; scrollHeight: number }, slack = 24): boolean {
  return box.scrollHeight - box.scrollTop - box.clientHeight <= slack;
}
