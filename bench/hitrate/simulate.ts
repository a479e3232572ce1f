// Replays a trace against an eviction policy in memory at a byte quota: object and byte hit rate
// and the bytes fetched upstream. Eviction runs before an object is stored, as in the appliance,
// so the cache never holds more than the quota. Belady's offline optimum (evict what is next used
// furthest in the future, may decline to store) is the bound.
import { PriorityHeap, makePolicy, type EvictionPolicy, type PolicyName } from "../../src/storage/eviction/policies.ts"
import type { Trace, TraceEvent } from "./traces.ts"

export interface SimulationResult {
  readonly policy: string
  readonly quota: number
  readonly requests: number
  readonly hits: number
  readonly bytes: number
  readonly hitBytes: number
  readonly upstreamBytes: number
  readonly evictions: number
  readonly objectHitRate: number
  readonly byteHitRate: number
}

const keyOf = (event: TraceEvent) => `${event.repository}/${event.key}`

/** for each event, the index of the next request for the same key (Infinity when none) */
const nextUses = (events: ReadonlyArray<TraceEvent>): Float64Array => {
  const next = new Float64Array(events.length)
  const seen = new Map<string, number>()
  for (let i = events.length - 1; i >= 0; i--) {
    const key = keyOf(events[i])
    next[i] = seen.get(key) ?? Number.POSITIVE_INFINITY
    seen.set(key, i)
  }
  return next
}

/** Belady's MIN as a policy over the trace it is given */
const makeBelady = (events: ReadonlyArray<TraceEvent>) => {
  const next = nextUses(events)
  // furthest next use first: a min-heap on the negated index
  const heap = new PriorityHeap()
  return {
    touch: (key: string, index: number) => heap.set(key, -next[index]),
    victim: (): string | undefined => heap.pop()?.key
  }
}

export const simulate = (trace: Trace, policyName: PolicyName | "belady", quota: number): SimulationResult => {
  const events = trace.events
  const cached = new Map<string, number>()
  let used = 0
  let hits = 0
  let bytes = 0
  let hitBytes = 0
  let evictions = 0
  const belady = policyName === "belady" ? makeBelady(events) : undefined
  const policy: EvictionPolicy | undefined = policyName === "belady" ? undefined : makePolicy(policyName, quota)
  const evict = (key: string) => {
    used -= cached.get(key)!
    cached.delete(key)
    evictions++
  }
  for (let i = 0; i < events.length; i++) {
    const event = events[i]
    const key = keyOf(event)
    bytes += event.size
    if (cached.has(key)) {
      hits++
      hitBytes += event.size
      if (belady !== undefined) belady.touch(key, i)
      else policy!.access(key)
      continue
    }
    if (event.size > quota) continue
    if (belady !== undefined) {
      // store, then drop whatever is needed furthest away (possibly this object)
      cached.set(key, event.size)
      used += event.size
      belady.touch(key, i)
      while (used > quota) {
        const victim = belady.victim()
        if (victim === undefined) break
        evict(victim)
      }
      continue
    }
    while (used + event.size > quota) {
      const victim = policy!.victim()
      if (victim === undefined) break
      evict(victim)
    }
    cached.set(key, event.size)
    used += event.size
    policy!.insert(key, event.size)
  }
  return {
    policy: policyName,
    quota,
    requests: events.length,
    hits,
    bytes,
    hitBytes,
    upstreamBytes: bytes - hitBytes,
    evictions,
    objectHitRate: hits / events.length,
    byteHitRate: hitBytes / bytes
  }
}

/**
 * Manifest GETs by tag (what a registry counts as pulls) in the busiest 6 hours: without a cache
 * every pull goes upstream; through larder a tag's manifest is fetched once per metadata age.
 */
export const upstreamPulls = (trace: Trace, metadataMaxAgeSeconds: number): { readonly direct: number; readonly viaLarder: number } => {
  const manifests = trace.events.filter((event) => event.kind === "metadata" && event.repository.startsWith("docker"))
  const fetchedAt = new Map<string, number>()
  const direct: Array<number> = []
  const viaLarder: Array<number> = []
  for (const event of manifests) {
    direct.push(event.time)
    const last = fetchedAt.get(event.key)
    if (last === undefined || event.time - last >= metadataMaxAgeSeconds) {
      fetchedAt.set(event.key, event.time)
      viaLarder.push(event.time)
    }
  }
  const busiest = (times: ReadonlyArray<number>) => {
    let best = 0
    let start = 0
    for (let end = 0; end < times.length; end++) {
      while (times[end] - times[start] >= 6 * 3600) start++
      best = Math.max(best, end - start + 1)
    }
    return best
  }
  return { direct: busiest(direct), viaLarder: busiest(viaLarder) }
}
