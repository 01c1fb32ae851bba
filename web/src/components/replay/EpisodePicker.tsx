// The recording's episodes: a strip with one segment per episode, as wide as its length (the
// episode boundaries), and a list to choose from; the open episode's summary beside it.
import { memo } from "react";
import { formatNumber } from "../../lib/format";

export type EpisodeSummary = Record<string, unknown> & { index: number };

/** The largest number of segments the strip draws (more episodes: the list alone). */
const STRIP_LIMIT = 400;

function ending(e: EpisodeSummary): string {
  if (e.terminated === true) return "terminated";
  if (e.truncated === true) return "truncated";
  return "not ended";
}

function success(e: EpisodeSummary): string {
  if (e.is_success === true || e.is_success === 1) return "success";
  if (e.is_success === false || e.is_success === 0) return "no success";
  return "";
}

function number(value: unknown): number | string | null {
  return typeof value === "number" || typeof value === "string" ? value : null;
}

export function episodeLabel(e: EpisodeSummary): string {
  const parts = [`Episode ${e.index}`, `${formatNumber(number(e.length))} steps`, `return ${formatNumber(number(e.return))}`, ending(e)];
  const s = success(e);
  if (s) parts.push(s);
  if (typeof e.outcome === "string" && e.outcome) parts.push(e.outcome);
  return parts.join(" · ");
}

interface Props {
  episodes: readonly EpisodeSummary[];
  current: number | null;
  onPick: (index: number) => void;
}

export const EpisodePicker = memo(function EpisodePicker({ episodes, current, onPick }: Props) {
  const open = episodes.find((e) => e.index === current);
  return (
    <section className="episode-picker" aria-label="Episodes">
      {episodes.length <= STRIP_LIMIT && (
        <div className="episode-strip" role="group" aria-label="Episode boundaries">
          {episodes.map((e) => (
            <button key={e.index} type="button" data-testid={`episode-${e.index}`} aria-pressed={e.index === current}
              title={episodeLabel(e)} aria-label={episodeLabel(e)}
              className={`episode-segment ${ending(e).replace(" ", "-")}${success(e) === "success" ? " success" : ""}`}
              style={{ flexGrow: Math.max(1, typeof e.length === "number" ? e.length : 1) }}
              onClick={() => onPick(e.index)} />
          ))}
        </div>
      )}
      <label className="episode-select">
        Episode
        <select data-testid="episode-select" value={current ?? ""} onChange={(ev) => onPick(Number(ev.target.value))}>
          {episodes.map((e) => <option key={e.index} value={e.index}>{episodeLabel(e)}</option>)}
        </select>
      </label>
      {open && (
        <dl className="episode-details" data-testid="episode-details">
          <div><dt>Length</dt><dd data-testid="episode-length">{formatNumber(number(open.length))}</dd></div>
          <div><dt>Return</dt><dd data-testid="episode-return">{formatNumber(number(open.return))}</dd></div>
          <div><dt>Ended</dt><dd data-testid="episode-ending">{ending(open)}</dd></div>
          <div><dt>is_success</dt><dd>{open.is_success === undefined ? "–" : String(open.is_success)}</dd></div>
          {open.outcome !== undefined && <div><dt>Outcome</dt><dd>{String(open.outcome)}</dd></div>}
          <div><dt>Seed</dt><dd data-testid="episode-seed">{open.seed === undefined || open.seed === null ? "none" : String(open.seed)}</dd></div>
          <div><dt>Start</dt><dd>{String(open.start ?? "reset")}</dd></div>
        </dl>
      )}
    </section>
  );
});
