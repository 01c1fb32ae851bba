// The steps the replay's plots show: the whole episode, or a range dragged out on any plot
// (every plot then shows the same steps, as one timeline).

export interface StepRange {
  min: number;
  max: number;
}

/**
 * The zoom a chart's new x scale asks for, in whole steps within the episode's [first, last];
 * null when it shows the whole episode again (a double-click; a chart of actions or rewards
 * starts at step 1 where one of observations starts at the reset's step 0) or is not a range.
 */
export function zoomOf(range: StepRange, first: number, last: number): StepRange | null {
  if (!Number.isFinite(range.min) || !Number.isFinite(range.max)) return null;
  const min = Math.max(first, Math.floor(range.min));
  const max = Math.min(last, Math.ceil(range.max));
  if (max <= min || (min <= first + 1 && max >= last)) return null;
  return { min, max };
}

export function sameZoom(a: StepRange | null, b: StepRange | null): boolean {
  return a === b || (a !== null && b !== null && a.min === b.min && a.max === b.max);
}
