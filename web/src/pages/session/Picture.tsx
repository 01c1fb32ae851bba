// The live picture (the last JPEG frame), or the log tail once the environment crashed.
// data-testid: frame (the <img>), no-frame, crashed, crash-reason, log-tail.
import type { Play } from "./usePlay";

export function Picture({ play, envId }: { play: Play; envId: string }) {
  if (play.phase === "crashed") {
    return (
      <div className="picture crashed" data-testid="crashed" role="alert">
        <h2>The environment crashed</h2>
        {play.crashReason ? <p data-testid="crash-reason">{play.crashReason}</p> : null}
        <p>Its last log lines:</p>
        <pre className="log-tail" data-testid="log-tail" tabIndex={0}>{play.logTail ?? "reading the log…"}</pre>
      </div>
    );
  }
  return (
    <div className="picture">
      {play.frameUrl ? (
        <img data-testid="frame" src={play.frameUrl} alt={`${envId}, step ${play.view.step}`}
          width={play.frameSize?.width} height={play.frameSize?.height} />
      ) : (
        <span className="muted" data-testid="no-frame">{play.phase === "connecting" ? "Connecting…" : "This environment sends no pictures."}</span>
      )}
    </div>
  );
}
