// `npm run bench:hitrate`: regenerates the traces (seeded), replays each against every eviction
// policy and Belady's bound at 5, 10 and 25% of its working set, replays a scaled CI-fleet trace
// against the real appliance to check the simulator, computes the upstream-protection figure, and
// writes the tables into bench/RESULTS.md and the charts into bench/charts/.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createGzip } from "node:zlib"
import { createWriteStream } from "node:fs"
import { pipeline } from "node:stream/promises"
import { Readable } from "node:stream"
import { defaultEvictionPolicy } from "../../src/storage/Index.ts"
import { lineChart } from "./chart.ts"
import { replayOnAppliance, scaleTrace } from "./replay.ts"
import { simulate, upstreamPulls, type SimulationResult } from "./simulate.ts"
import { aptTrace, ciFleetTrace, rolloutTrace, workingSet, type Trace } from "./traces.ts"

const started = performance.now()

const resultsFile = new URL("../RESULTS.md", import.meta.url).pathname
const chartsDir = new URL("../charts/", import.meta.url).pathname
const tracesDir = new URL("../.work/traces/", import.meta.url).pathname
mkdirSync(chartsDir, { recursive: true })
mkdirSync(tracesDir, { recursive: true })

const policies = ["lru", "gdsf", "lfu-da", "s3-fifo", "belady"] as const
const labels: Record<(typeof policies)[number], string> = {
  lru: "LRU",
  gdsf: "GDSF (cost 1)",
  "lfu-da": "LFU-DA (GDSF, cost = size)",
  "s3-fifo": "S3-FIFO",
  belady: "Belady (offline bound)"
}
const shares = [5, 10, 25]
const percent = (x: number) => `${(x * 100).toFixed(1)}%`
const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`

const saveTrace = async (trace: Trace) => {
  const file = `${tracesDir}${trace.name}.csv.gz`
  const lines = (function*() {
    yield "time,repository,key,size,kind\n"
    for (const e of trace.events) yield `${e.time.toFixed(2)},${e.repository},${e.key},${e.size},${e.kind}\n`
  })()
  await pipeline(Readable.from(lines), createGzip(), createWriteStream(file))
  return file
}

const traces = [ciFleetTrace(), rolloutTrace(), aptTrace()]
const sections: Array<string> = []
const results = new Map<string, Map<string, Map<number, SimulationResult>>>()
for (const trace of traces) {
  const file = await saveTrace(trace)
  const set = workingSet(trace)
  const byPolicy = new Map<string, Map<number, SimulationResult>>()
  for (const policy of policies) {
    const byShare = new Map<number, SimulationResult>()
    for (const share of shares) byShare.set(share, simulate(trace, policy, (set * share) / 100))
    byPolicy.set(policy, byShare)
  }
  results.set(trace.name, byPolicy)
  const totalBytes = trace.events.reduce((sum, e) => sum + e.size, 0)
  const rows = policies.map((policy) =>
    `| ${labels[policy]}${policy === defaultEvictionPolicy ? " (default)" : ""} | ${shares.map((share) => {
      const r = byPolicy.get(policy)!.get(share)!
      return `${percent(r.byteHitRate)} / ${percent(r.objectHitRate)} / ${gib(r.upstreamBytes)}`
    }).join(" | ")} |`
  )
  writeFileSync(`${chartsDir}hitrate-${trace.name}.svg`, lineChart(
    `${trace.name}: byte hit rate by quota`,
    "quota (share of the trace's working set)",
    "byte hit rate",
    shares,
    policies.map((policy) => ({ name: labels[policy], dashed: policy === "belady", points: shares.map((share) => [share, byPolicy.get(policy)!.get(share)!.byteHitRate * 100] as const) }))
  ))
  sections.push(`### Trace: ${trace.name}

${trace.description}. ${trace.events.length} requests, ${gib(totalBytes)} requested, working set ${gib(set)}
(trace: \`bench/.work/traces/${file.split("/").at(-1)}\`).

| Policy | ${shares.map((s) => `${s}% quota: byte / object hit rate / upstream`).join(" | ")} |
| --- | ${shares.map(() => "---").join(" | ")} |
${rows.join("\n")}

![${trace.name}](charts/hitrate-${trace.name}.svg)
`)
}

// targets on the CI fleet at 10%
const ci = results.get("ci-fleet")!
const at10 = (policy: string) => ci.get(policy)!.get(10)!.byteHitRate * 100
const chosen = at10(defaultEvictionPolicy)
const vsLru = chosen - at10("lru")
const vsBelady = at10("belady") - chosen

// upstream protection: the rollout's manifest pulls in the busiest 6 hours
const rollout = traces[1]
const pulls = upstreamPulls(rollout, 1440 * 60)

// the simulator against the real appliance: a scaled CI fleet (6 agents, 2 days, sizes / 4096)
const replayTrace = scaleTrace(ciFleetTrace(1, { days: 2, agents: 6 }), 4096)
const replayQuota = Math.round(workingSet(replayTrace) * 0.1)
const simulated = simulate(replayTrace, defaultEvictionPolicy, replayQuota)
let replayLine: string
let agreement = Number.NaN
try {
  const real = await replayOnAppliance(replayTrace, replayQuota, defaultEvictionPolicy, 6 * 60_000)
  agreement = Math.abs(real.byteHitRate - simulated.byteHitRate) * 100
  replayLine = `| ${replayTrace.events.length} requests, quota ${(replayQuota / 2 ** 20).toFixed(1)} MiB (10%) | ${percent(simulated.byteHitRate)} / ${percent(simulated.objectHitRate)} | ${percent(real.byteHitRate)} / ${percent(real.objectHitRate)} | ${agreement.toFixed(2)} points | ${real.evictions} evictions, store peak ${(real.peakStoreBytes / 2 ** 20).toFixed(2)} MiB ≤ quota: ${real.peakStoreBytes <= replayQuota ? "yes" : "NO"}; ${real.seconds.toFixed(0)} s |`
} catch (error) {
  replayLine = `| replay failed: ${(error as Error).message} | ${percent(simulated.byteHitRate)} | – | – | – |`
}

const verdict = (ok: boolean) => (ok ? "met" : "MISSED")
const block = `<!-- hitrate:begin (written by npm run bench:hitrate; bench/hitrate/run.ts) -->
## Cache hit rate and the eviction policy (\`npm run bench:hitrate\`)

Generated ${new Date().toISOString()} in ${((performance.now() - started) / 1000).toFixed(0)} s. Seeded traces (bench/hitrate/traces.ts)
replayed in memory (bench/hitrate/simulate.ts) against each policy in \`src/storage/eviction/policies.ts\`
— the code the appliance runs — and Belady's offline optimum (evicts what is next used furthest in
the future and may decline to store; the usual bound, not exact for mixed sizes). Eviction happens
before an object is stored, as in the appliance. Cells: byte hit rate / object hit rate / bytes
fetched upstream.

| Target (CI fleet, 10% quota) | Figure | Verdict |
| --- | --- | --- |
| default policy (${labels[defaultEvictionPolicy]}) ≥ LRU + 5 points | ${at10(defaultEvictionPolicy).toFixed(1)}% vs LRU ${at10("lru").toFixed(1)}%: +${vsLru.toFixed(1)} | ${verdict(vsLru >= 5)} |
| within 10 points of Belady | Belady ${at10("belady").toFixed(1)}%: ${vsBelady.toFixed(1)} points behind | ${verdict(vsBelady <= 10)} |
| simulator and real replay agree within 2 points | ${Number.isNaN(agreement) ? "replay failed" : `${agreement.toFixed(2)} points`} | ${verdict(agreement <= 2)} |

${sections.join("\n")}
### Simulator vs the real appliance

| Scaled CI fleet (6 agents × 2 days, sizes / 4096) | simulated byte / object | real byte / object | difference (byte) | notes |
| --- | --- | --- | --- | --- |
${replayLine}

### Upstream protection: the rollout against the public registry's anonymous limit

Manifest GETs by tag are what the default public registry counts as pulls (100 per 6 hours for an
anonymous address). In the busiest 6 hours of the rollout trace the registry sees **${pulls.direct}**
pulls from the cluster's nodes directly (${(pulls.direct / 100).toFixed(1)}× the limit), and **${pulls.viaLarder}** through larder
(each tag's manifest fetched once per \`metadataMaxAge\` of 24 h; ${pulls.viaLarder <= 100 ? "under" : "over"} the limit).
<!-- hitrate:end -->
`
const previous = (() => {
  try {
    return readFileSync(resultsFile, "utf8")
  } catch {
    return "# larder benchmark results\n"
  }
})()
const pattern = /<!-- hitrate:begin[\s\S]*?<!-- hitrate:end -->\n?/
writeFileSync(resultsFile, pattern.test(previous) ? previous.replace(pattern, block) : `${previous.trimEnd()}\n\n${block}`)
console.log(block)
console.log(`wrote ${resultsFile} and ${chartsDir}hitrate-*.svg in ${((performance.now() - started) / 1000).toFixed(0)} s`)

