// Play back's use of the session stream (api/stream.ts): reset and step with observation
// "digest", a frame only when asked, each answer reduced to what the comparison needs.
import { SessionStream } from "../../api/stream";
import { toNumber } from "../../lib/replay/arrays";
import type { PlayedStep } from "../../lib/replay/playBack";

export interface PlayedAnswer extends PlayedStep {
  frame: Blob | null;
}

export interface PlayBackLink {
  reset(seed: number | null, options: Record<string, unknown> | null): Promise<{ digest: string | null; frame: Blob | null }>;
  step(action: unknown, withFrame: boolean): Promise<PlayedAnswer>;
  close(): void;
}

function digestOf(result: { observation_digest?: string | null }): string | null {
  return typeof result.observation_digest === "string" ? result.observation_digest : null;
}

export async function openPlayBackLink(sessionId: string): Promise<PlayBackLink> {
  const stream = await SessionStream.open(sessionId);
  return {
    async reset(seed, options) {
      const reply = await stream.reset({ seed, options, observation: "digest", frame: true });
      return { digest: digestOf(reply.result), frame: reply.frame?.blob ?? null };
    },
    async step(action, withFrame) {
      const reply = await stream.step({ action, observation: "digest", frame: withFrame });
      const r = reply.result;
      return {
        reward: toNumber(r.reward),
        terminated: r.terminated === true,
        truncated: r.truncated === true,
        digest: digestOf(r),
        frame: reply.frame?.blob ?? null,
      };
    },
    close: () => stream.close(),
  };
}
