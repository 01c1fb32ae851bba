// An experiment's log as the page shows it: followed over the WebSocket from byte 0
// (lib/experiments/logFollower.ts: opened again at the last next_offset after a drop), the text
// kept by lib/experiments/logText.ts. `onStatus` hears each piece's status, so the page reads
// the experiment again when it changes or ends. A refused token (4401) sends the app to sign-in.
import { useEffect, useRef, useState } from "react";
import { type ExperimentStatus, logStreamUrl } from "../../api/experiments";
import { savedToken, tokenRefused } from "../../lib/auth/token";
import { type FollowState, LogFollower } from "../../lib/experiments/logFollower";
import { appendLog, EMPTY_LOG, type LogText } from "../../lib/experiments/logText";

export function useLogFollower(experimentId: string, onStatus: (status: ExperimentStatus, ended: boolean) => void) {
  const [log, setLog] = useState<LogText>(EMPTY_LOG);
  const [state, setState] = useState<FollowState>({ phase: "connecting", again: false, attempt: 1 });
  const heard = useRef(onStatus);
  heard.current = onStatus;

  useEffect(() => {
    setLog(EMPTY_LOG);
    const follower = new LogFollower({
      url: (offset) => logStreamUrl(experimentId, offset, savedToken()),
      onPage: (page) => {
        setLog((held) => appendLog(held, page.text));
        heard.current(page.status, page.ended);
      },
      onState: (next) => {
        setState(next);
        if (next.phase === "failed" && next.code === 4401 && savedToken() !== null) tokenRefused();
      },
    });
    follower.start();
    return () => follower.stop();
  }, [experimentId]);

  return { log, state };
}
