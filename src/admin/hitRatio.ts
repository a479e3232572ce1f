// What share of a repository's requests the cache answered without going upstream. Shared by the
// web UI and `larder repos list`, so both show the same figure.
export const cacheResults = ["hit", "miss", "coalesced", "negative", "stale"] as const

export interface HitRatio {
  readonly served: number
  /** undefined before the first request */
  readonly ratio: number | undefined
}

export const hitRatio = (counts: Readonly<Record<string, number | undefined>>): HitRatio => {
  const served = cacheResults.reduce((sum, result) => sum + (counts[result] ?? 0), 0)
  // a coalesced request joined a fetch in flight and a negative or stale one was answered from the
  // cache: none of them went upstream, so they count as saved traffic
  const saved = (counts.hit ?? 0) + (counts.coalesced ?? 0) + (counts.negative ?? 0) + (counts.stale ?? 0)
  return { served, ratio: served === 0 ? undefined : saved / served }
}

export const formatRatio = (ratio: number | undefined): string => (ratio === undefined ? "–" : `${(ratio * 100).toFixed(1)}%`)

/** the samples of one metric in Prometheus's text format, with their labels */
export const samplesOf = (text: string, name: string): ReadonlyArray<{ readonly labels: Record<string, string>; readonly value: number }> =>
  text.split("\n").flatMap((line) => {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s+(\S+)/.exec(line)
    if (match === null || match[1] !== name) return []
    const labels = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]))
    return [{ labels, value: Number(match[3]) }]
  })
