// The hit-rate bench's own parts: the simulator's accounting on traces small enough to check by
// hand, Belady as a bound, seeded traces that are reproducible, and the upstream pull count.
import t from "tap"
import { simulate, upstreamPulls } from "../../bench/hitrate/simulate.ts"
import { aptTrace, rolloutTrace, workingSet, type Trace } from "../../bench/hitrate/traces.ts"

const trace = (keys: string, size = 10, kind: "content" | "metadata" = "content", step = 1): Trace => ({
  name: "hand",
  description: "by hand",
  events: [...keys].map((key, i) => ({ time: i * step, repository: "r", key, size, kind }))
})

t.test("LRU on a cyclic pattern larger than the cache never hits; Belady keeps what comes back", async (t) => {
  const cyclic = trace("abcabcabc")
  const lru = simulate(cyclic, "lru", 20)
  t.same([lru.hits, lru.requests, lru.upstreamBytes, lru.evictions], [0, 9, 90, 7], "two slots, three keys in a cycle")
  const belady = simulate(cyclic, "belady", 20)
  t.equal(belady.hits, 4, "the optimum: keep a, then swap the other slot")
  t.ok(belady.byteHitRate >= lru.byteHitRate)
})

t.test("accounting: bytes, hit bytes and rates; objects over the quota are never stored", async (t) => {
  const mixed: Trace = {
    name: "mixed",
    description: "",
    events: [
      { time: 0, repository: "r", key: "small", size: 10, kind: "content" },
      { time: 1, repository: "r", key: "huge", size: 1000, kind: "content" },
      { time: 2, repository: "r", key: "small", size: 10, kind: "content" },
      { time: 3, repository: "r", key: "huge", size: 1000, kind: "content" }
    ]
  }
  for (const policy of ["lru", "gdsf", "lfu-da", "s3-fifo", "belady"] as const) {
    const r = simulate(mixed, policy, 100)
    t.same([r.hits, r.bytes, r.hitBytes, r.upstreamBytes], [1, 2020, 10, 2010], policy)
    t.equal(r.objectHitRate, 0.25)
  }
})

t.test("Belady bounds every policy on the generated traces", async (t) => {
  for (const generated of [rolloutTrace(), aptTrace()]) {
    const quota = workingSet(generated) * 0.1
    const bound = simulate(generated, "belady", quota).byteHitRate
    for (const policy of ["lru", "gdsf", "lfu-da", "s3-fifo"] as const) {
      t.ok(simulate(generated, policy, quota).byteHitRate <= bound + 1e-9, `${generated.name}: ${policy} ≤ Belady`)
    }
  }
})

t.test("traces are reproducible from their seed", async (t) => {
  t.same(rolloutTrace(7).events.slice(0, 50), rolloutTrace(7).events.slice(0, 50))
  t.notSame(rolloutTrace(7).events.slice(0, 50), rolloutTrace(8).events.slice(0, 50))
})

t.test("upstream pulls: every manifest directly, once per metadata age through larder, busiest 6 hours", async (t) => {
  const pulls = trace("xxxxyyxx", 1, "metadata", 3600)
  const docker: Trace = { ...pulls, events: pulls.events.map((e) => ({ ...e, repository: "docker-public" })) }
  // hourly pulls x x x x y y x x; through larder x at 0 h, y at 4 h, x again at 6 h (4 h age)
  t.same(upstreamPulls(docker, 4 * 3600), { direct: 6, viaLarder: 2 }, "busiest 6 hours: 6 pulls direct, 2 through larder")
})
