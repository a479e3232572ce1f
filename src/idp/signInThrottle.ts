// Failed password sign-ins per account name: Keycloak's brute-force detection in small, and on by
// default. The first `freeFailures` failures cost nothing; after that the name is locked for a
// wait that doubles with each further failure, up to `maxWaitMs`. While locked, no password is
// checked at all. Failures are counted on the submitted name whether or not such a user exists,
// so a lockout does not tell which names do. A successful sign-in clears the name's count; a name
// with no failure for `forgetAfterMs` starts over.

export interface SignInThrottleOptions {
  readonly freeFailures: number
  readonly firstWaitMs: number
  readonly maxWaitMs: number
  readonly forgetAfterMs: number
  /** names remembered at once; the oldest is forgotten first */
  readonly limit: number
  readonly now: () => number
}

export const signInThrottleDefaults: SignInThrottleOptions = {
  freeFailures: 5,
  firstWaitMs: 30_000,
  maxWaitMs: 15 * 60_000,
  forgetAfterMs: 12 * 3600_000,
  limit: 10_000,
  now: Date.now
}

interface Failures {
  readonly count: number
  readonly last: number
}

export type SignInThrottle = ReturnType<typeof makeSignInThrottle>

export const makeSignInThrottle = (overrides: Partial<SignInThrottleOptions> = {}) => {
  const options = { ...signInThrottleDefaults, ...overrides }
  const failures = new Map<string, Failures>()
  const keyOf = (name: string) => name.trim().toLowerCase()

  const current = (key: string): Failures | undefined => {
    const entry = failures.get(key)
    if (entry !== undefined && options.now() - entry.last > options.forgetAfterMs) {
      failures.delete(key)
      return undefined
    }
    return entry
  }

  const lockedFor = (entry: Failures | undefined): number => {
    if (entry === undefined || entry.count < options.freeFailures) return 0
    const wait = Math.min(options.firstWaitMs * 2 ** (entry.count - options.freeFailures), options.maxWaitMs)
    return Math.max(0, entry.last + wait - options.now())
  }

  return {
    /** milliseconds until the name may try again; 0 when it may now */
    waitMs: (name: string): number => lockedFor(current(keyOf(name))),
    failed: (name: string): void => {
      const key = keyOf(name)
      const count = (current(key)?.count ?? 0) + 1
      failures.delete(key) // re-inserted last: Map order is then oldest failure first
      if (failures.size >= options.limit) failures.delete(failures.keys().next().value!)
      failures.set(key, { count, last: options.now() })
    },
    succeeded: (name: string): void => {
      failures.delete(keyOf(name))
    }
  }
}

/** "2 minutes", "30 seconds": for the page and the API's message */
export const describeWait = (ms: number): string => {
  const seconds = Math.ceil(ms / 1000)
  if (seconds < 60) return `${seconds} second${seconds === 1 ? "" : "s"}`
  const minutes = Math.ceil(seconds / 60)
  return `${minutes} minute${minutes === 1 ? "" : "s"}`
}
