// Which frame rows to fetch around the cursor, nearest first. Playing forward looks further
// ahead than behind; playing fast fetches every `stride`-th row, as the screen shows no more
// than about 30 frames a second anyway.

export interface PrefetchWindow {
  /** Rows to fetch after the cursor's (in the direction of play). */
  ahead: number;
  /** Rows to fetch before it. */
  behind: number;
  /** Fetch every stride-th row (1: every row). */
  stride: number;
}

/** The window for a player: scrubbing or paused looks both ways; playing looks ahead. */
export function prefetchWindow(playing: boolean, stepsPerSecond: number, shownPerSecond = 30): PrefetchWindow {
  if (!playing) return { ahead: 8, behind: 6, stride: 1 };
  const stride = Math.max(1, Math.ceil(stepsPerSecond / shownPerSecond));
  return { ahead: 48, behind: 4, stride };
}

/**
 * Rows within the window around `center` (a frame row), clipped to [0, count), nearest first:
 * the center, then rows ahead and behind in turn, `ahead / behind` ahead for each one behind.
 */
export function prefetchRows(center: number, count: number, window: PrefetchWindow): number[] {
  if (count <= 0) return [];
  const start = Math.min(count - 1, Math.max(0, Math.round(center)));
  const stride = Math.max(1, Math.floor(window.stride));
  const ahead: number[] = [];
  const behind: number[] = [];
  for (let k = 1; k <= window.ahead; k++) {
    const row = start + k * stride;
    if (row >= count) break;
    ahead.push(row);
  }
  for (let k = 1; k <= window.behind; k++) {
    const row = start - k * stride;
    if (row < 0) break;
    behind.push(row);
  }
  const out = [start];
  const ratio = window.behind > 0 ? Math.max(1, window.ahead / window.behind) : Number.POSITIVE_INFINITY;
  let a = 0;
  let b = 0;
  while (a < ahead.length || b < behind.length) {
    const takeAhead = a < ahead.length && (b >= behind.length || a < (b + 1) * ratio);
    if (takeAhead) out.push(ahead[a++]);
    else out.push(behind[b++]);
  }
  return out;
}
