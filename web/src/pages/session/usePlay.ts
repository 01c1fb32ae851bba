// The Session page's play of a session: the session player (lib/play/sessionPlayer.ts: the
// stream, the play loop, the controls, snapshots, the crashed state) bound to React and to the
// platform's API. The player lives as long as the page; its state (lib/play/playState.ts) is
// read with useSyncExternalStore; the window's keys go to it, except while the person types.
import { useEffect, useState, useSyncExternalStore } from "react";
import { api } from "../../api/client";
import { SessionStream } from "../../api/stream";
import { type PlayPlatform, SessionPlayer } from "../../lib/play/sessionPlayer";
import { TEACHER_ACTION, teacherAction } from "../../lib/play/teacher";
import type { SessionInfo } from "./sessionInfo";

export type { ActedBy, EpisodeView, InSessionSnapshot, Mode, Phase } from "../../lib/play/playState";

/** The platform as the player reaches it from the page: the session's WebSocket and REST calls. */
const PLATFORM: PlayPlatform = {
  openStream: (sessionId) => SessionStream.open(sessionId),
  readSession: async (sessionId) => (await api.GET("/v0/sessions/{session_id}", { params: { path: { session_id: sessionId } } })).data,
  deleteSession: async (sessionId) => {
    const { error } = await api.DELETE("/v0/sessions/{session_id}", { params: { path: { session_id: sessionId } } });
    if (error) throw error;
  },
};

/** Whether a key event is typing in a field (the keys are the field's then, not the session's). */
function typing(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

/** Passes the window's keys to the player; returns what stops it. */
function listenToKeys(player: SessionPlayer): () => void {
  const onDown = (event: KeyboardEvent) => {
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (player.keyDown(event.key, event.repeat)) event.preventDefault();
  };
  const onUp = (event: KeyboardEvent) => {
    if (player.keyUp(event.key) && !typing(event.target)) event.preventDefault();
  };
  const onBlur = () => player.releaseKeys();
  window.addEventListener("keydown", onDown);
  window.addEventListener("keyup", onUp);
  window.addEventListener("blur", onBlur);
  return () => {
    window.removeEventListener("keydown", onDown);
    window.removeEventListener("keyup", onUp);
    window.removeEventListener("blur", onBlur);
  };
}

export function usePlay(session: SessionInfo, resumeFrom: string | null) {
  const [player] = useState(() => new SessionPlayer(session, resumeFrom, PLATFORM));
  const state = useSyncExternalStore(player.subscribe, player.getState);

  useEffect(() => {
    player.start();
    return () => player.stop();
  }, [player]);

  useEffect(() => listenToKeys(player), [player]);

  return {
    ...state,
    controls: player.controls, rate: player.rate, observationMode: player.observationMode, actionSpace: player.actionSpace, hand: player.hand,
    teacherSuggestion: teacherAction(state.view.info, player.actionSpace),
    hasTeacher: state.view.info !== null && TEACHER_ACTION in state.view.info,
    play: player.play, pause: player.pause, step: player.step, reset: player.reset, setValue: player.setValue,
    setAutoReset: player.setAutoReset, takeSnapshot: player.takeSnapshot, restoreSnapshot: player.restoreSnapshot,
    saveSnapshot: player.saveSnapshot, closeSession: player.closeSession, playTeacher: player.playTeacher,
    setFollowTeacher: player.setFollowTeacher, dismissError: player.dismissError,
  };
}

export type Play = ReturnType<typeof usePlay>;
