// Marks on the scrubber's timeline: the recording's world changes within the episode and the
// play back's first divergent step, each placed at its step.

export interface TimelineMark {
  step: number;
  kind: "world-change" | "divergence";
  label: string;
}

interface Props {
  marks: readonly TimelineMark[];
  first: number;
  last: number;
  onSeek: (step: number) => void;
}

export function TimelineMarks({ marks, first, last, onSeek }: Props) {
  if (marks.length === 0) return null;
  const span = Math.max(1, last - first);
  return (
    <div className="timeline-marks" aria-label="Timeline marks">
      {marks.map((mark, i) => (
        <button key={`${mark.kind}-${mark.step}-${i}`} type="button" className={`timeline-mark ${mark.kind}`}
          data-testid={mark.kind === "world-change" ? `world-change-${i}` : "divergence-mark"}
          style={{ left: `${((mark.step - first) / span) * 100}%` }}
          title={`step ${mark.step}: ${mark.label}`} aria-label={`step ${mark.step}: ${mark.label}`}
          onClick={() => onSeek(mark.step)} />
      ))}
    </div>
  );
}
