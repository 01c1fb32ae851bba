// How an episode ended, in words for the Session page's banner: success when the last step's
// info says so (`is_success` or `success`: the Menagerie arms, Gymnasium-Robotics style) or its
// `outcome` is a won one (Doom's "exit" and "completed"), else the outcome the environment
// names ("died", "timeout"), else nothing beyond terminated / truncated.

export interface EpisodeOutcome {
  /** true: a success; false: the environment says it failed; null: it does not say. */
  success: boolean | null;
  /** What the banner says beyond terminated / truncated: "success", "died", or "". */
  words: string;
}

const WON_OUTCOMES = new Set(["exit", "completed", "success"]);

export function episodeOutcome(info: unknown): EpisodeOutcome {
  const fields = info !== null && typeof info === "object" && !Array.isArray(info) ? (info as Record<string, unknown>) : {};
  const flag = typeof fields.is_success === "boolean" ? fields.is_success : typeof fields.success === "boolean" ? fields.success : null;
  const outcome = typeof fields.outcome === "string" ? fields.outcome : null;
  if (flag === true || (outcome !== null && WON_OUTCOMES.has(outcome))) {
    return { success: true, words: outcome !== null && outcome !== "success" ? `success (${outcome})` : "success" };
  }
  if (outcome !== null) return { success: false, words: outcome };
  if (flag === false) return { success: false, words: "not a success" };
  return { success: null, words: "" };
}
