// Reset seeds the page chooses, so that every episode played in the browser can be played back.

/** A random seed in 0 .. 2**31 - 1 (within what every environment's RNG takes). */
export function randomSeed(random: () => number = Math.random): number {
  return Math.floor(random() * 2 ** 31);
}
