// npm run bench: larder against nginx proxy_cache (worker_processes 1) in front of the same local
// upstream, in one run; then larder's docker proxy repository against docker-registry in proxy
// mode (bench/ociCache.ts) in front of the same origin registry. Prints larder figure, reference
// figure, ratio and target, then writes bench/RESULTS.md. Options: --peers larder,nginx,registry
// (default all), --only raw|oci|packages (default all sections; packages: npm vs verdaccio, apt vs
// apt-cacher-ng, bench/packageCache.ts).
import { performance } from "node:perf_hooks"
import { startUpstream, type Upstream } from "../test/support/upstream.ts"
import { startLink, type Link } from "./link.ts"
import { startLarder } from "./peers/larder.ts"
import { startNginxPeer } from "./peers/nginxPeer.ts"
import type { Peer } from "./peers/peer.ts"
import { startRegistryProxy } from "./peers/registryProxy.ts"
import * as oci from "./ociCache.ts"
import * as packages from "./packageCache.ts"
import * as raw from "./rawCache.ts"
import { fixed, isValue, machine, markdownTable, ratioOf, show, times, writeResults, type Figure, type Row, type Section } from "./report.ts"
import { registryBinary } from "../test/support/registry.ts"
import { dockerProxyRepository } from "./peers/larder.ts"
import { waitForQuiet } from "./quiet.ts"
import { findTools } from "./tools.ts"

const resultsFile = new URL("RESULTS.md", import.meta.url).pathname
const cacheLockTimeout = "10m"
const watchdogMinutes = 15
/** busiest the machine may be (all cores, 0–1) before a peer is measured */
const quietBusy = 0.15

const peerNames = ["larder", "nginx", "registry"] as const
type PeerName = (typeof peerNames)[number]

const selectedPeers = (): PeerName[] => {
  const i = process.argv.indexOf("--peers")
  if (i < 0) return [...peerNames]
  const wanted = (process.argv[i + 1] ?? "").split(",")
  return peerNames.filter((p) => wanted.includes(p))
}

const sectionNames = ["raw", "oci", "packages"] as const
type SectionName = (typeof sectionNames)[number]
const selectedSections = (): SectionName[] => {
  const i = process.argv.indexOf("--only")
  if (i < 0) return [...sectionNames]
  const wanted = (process.argv[i + 1] ?? "").split(",")
  return sectionNames.filter((s) => wanted.includes(s))
}

const tools = findTools()
if (tools === undefined) process.exit(1)

const started = performance.now()
let failed = false
const notes: string[] = []
const peers = new Map<PeerName, Peer | Error>()
let upstream: Upstream | undefined
let link: Link | undefined
let ociFixtures: oci.Fixtures | undefined

const stopPeers = async () => {
  for (const peer of peers.values()) if (!(peer instanceof Error)) await peer.stop().catch(() => undefined)
  peers.clear()
}
const cleanup = async () => {
  await stopPeers()
  await link?.close()
  await upstream?.close()
  await ociFixtures?.close().catch(() => undefined)
  link = upstream = ociFixtures = undefined
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void cleanup().finally(() => process.exit(130)))
}
const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${watchdogMinutes} minutes; stopping`)
  void cleanup().finally(() => process.exit(2))
}, watchdogMinutes * 60_000)

const log = (text: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${text}`)

/** Runs one measurement for each started peer, on a quiet machine; a failure becomes that peer's
 * figure. With rounds > 1 the peers take turns in alternating order and the best figure counts,
 * so neither always runs right after the other. */
const measure = async <T>(
  label: string,
  run: (peer: Peer) => Promise<T>,
  describe: (value: T) => string,
  repeat: { readonly rounds: number; readonly better: (a: T, b: T) => boolean } = { rounds: 1, better: () => false }
) => {
  const figures: Partial<Record<PeerName, Figure<T>>> = {}
  for (let round = 0; round < repeat.rounds; round++) {
    const order = [...peers].filter((entry): entry is [PeerName, Peer] => !(entry[1] instanceof Error))
    if (round % 2 === 1) order.reverse()
    for (const [name, peer] of order) {
      if (figures[name] instanceof Error) continue
      const machine = await waitForQuiet({ maxBusy: quietBusy, maxWaitSeconds: 20 })
      if (!machine.quiet) notes.push(`the machine was still ${(machine.busy * 100).toFixed(0)}% busy after 20 s before ${name} ${label}; busiest: ${machine.busiest}`)
      const t0 = performance.now()
      const figure = await run(peer).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))
      const suffix = repeat.rounds > 1 ? ` [round ${round + 1}/${repeat.rounds}]` : ""
      log(`${name.padEnd(6)} ${label}${suffix}: ${show(figure, describe)} (${((performance.now() - t0) / 1000).toFixed(1)} s)`)
      if (figure instanceof Error) {
        failed = true
        notes.push(`${name} ${label} failed: ${figure.message}`)
      }
      const previous = figures[name]
      if (previous === undefined || figure instanceof Error || (isValue(previous) && repeat.better(figure, previous))) figures[name] = figure
    }
  }
  return figures
}

const larderCell = <T>(figure: Figure<T>, format: (value: T) => string) => {
  const larder = peers.get("larder")
  return larder instanceof Error ? "did not start" : show(figure, format)
}

const rows: Row[] = []
const ociRows: Row[] = []
const npmRows: Row[] = []
const aptRows: Row[] = []
const main = async () => {
  const chosenSections = selectedSections()
  if (chosenSections.includes("raw")) await rawSection()
  if (chosenSections.includes("oci")) await ociSection()
  if (chosenSections.includes("packages")) {
    npmRows.push(...(await packages.npmRows(tools.wrk, log, notes)))
    aptRows.push(...(await packages.aptRows(log, notes)))
  }
}

const startPeer = async (name: PeerName, start: () => Promise<Peer>) => {
  const peer = await start().catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))
  peers.set(name, peer)
  if (peer instanceof Error) {
    failed = true
    notes.push(`${name} did not start: ${peer.message.slice(0, 2000)}`)
  }
}

const ociSection = async () => {
  const chosen = selectedPeers().filter((p) => p !== "nginx")
  log(`building images and starting the origin registry (peers: ${chosen.join(", ")})`)
  ociFixtures = await oci.prepare(chosen)
  const originUrl = ociFixtures.origin.url
  if (chosen.includes("larder")) await startPeer("larder", () => startLarder([dockerProxyRepository(oci.repository, originUrl)]))
  if (chosen.includes("registry")) await startPeer("registry", () => startRegistryProxy(originUrl))
  log(`started ${[...peers].map(([n, p]) => `${n}${p instanceof Error ? " (FAILED)" : ` pid ${p.pid}`}`).join(", ")}`)
  const c = (): oci.Context => ({ tools, fixtures: ociFixtures!, note: (text) => (notes.push(text), log(`note: ${text}`)) })
  const s = oci.settings
  const higher = { rounds: 2, better: (a: number, b: number) => a > b }

  const blob = await measure("OCI blob hit throughput", (p) => oci.blobHit(c(), p), (v) => `${v.toFixed(0)} MB/s`, higher)
  const blobRatio = ratioOf(blob.larder, blob.registry)
  ociRows.push({
    measure: `${s.blobHit.layerFileSize / 2 ** 20} MiB layer, blob cache hit, MB/s (${s.blobHit.clients} parallel clients × ${s.blobHit.rounds} rounds, best of 2)`,
    larder: larderCell(blob.larder, fixed(0)),
    reference: show(blob.registry, fixed(0)),
    ratio: times(blobRatio),
    target: "≥ 1.50× registry proxy",
    met: blobRatio === undefined ? undefined : blobRatio >= 1.5
  })

  type Rate = Awaited<ReturnType<typeof oci.manifestRate>>
  const manifest = await measure(
    "OCI manifest hit rate",
    (p) => oci.manifestRate(c(), p),
    (v) => `${v.rate.toFixed(0)} req/s, ${v.originRequests} origin request(s) for ${v.requests} served`,
    { rounds: 2, better: (a: Rate, b: Rate) => a.rate > b.rate }
  )
  const rateOf = (f: Figure<Rate>) => (isValue(f) ? f.rate : undefined)
  const manifestRatio = ratioOf(rateOf(manifest.larder), rateOf(manifest.registry))
  const rateCell = (v: Rate) => `${v.rate.toFixed(0)} (${v.originRequests} origin requests)`
  ociRows.push({
    measure: `Manifest by tag, cache hit, req/s (OCI Accept, ${s.manifestRate.connections} connections, wrk ${s.manifestRate.seconds} s, best of 2)`,
    larder: larderCell(manifest.larder, rateCell),
    reference: show(manifest.registry, rateCell),
    ratio: times(manifestRatio),
    target: "≥ 1.50× registry proxy",
    met: manifestRatio === undefined ? undefined : manifestRatio >= 1.5
  })

  const cold = await measure(
    "OCI cold pull",
    (p) => oci.coldPull(c(), p),
    (v) => `${v.originBlobGets} origin blob GETs (${v.blobs} blobs), ${v.originManifestRequests} origin manifest requests, ${v.wallSeconds.toFixed(2)} s, ${(v.bytes / 1e6).toFixed(0)} MB delivered`
  )
  const coldLabel = `${s.coldPull.clients} concurrent cold pulls of a fresh ${s.coldPull.layers}-layer image (${oci.coldImageMiB()} MiB)`
  ociRows.push({
    measure: `${coldLabel}: origin blob GETs`,
    larder: larderCell(cold.larder, (v) => `${v.originBlobGets} (${v.blobs} blobs)`),
    reference: show(cold.registry, (v) => `${v.originBlobGets} (${v.blobs} blobs)`),
    ratio: times(ratioOf(isValue(cold.larder) ? cold.larder.originBlobGets : undefined, isValue(cold.registry) ? cold.registry.originBlobGets : undefined)),
    target: "larder: one per blob",
    met: isValue(cold.larder) ? cold.larder.originBlobGets === cold.larder.blobs : undefined
  })
  const wall = (f: Figure<oci.ColdPull>) => (isValue(f) ? f.wallSeconds : undefined)
  const wallRatio = ratioOf(wall(cold.larder), wall(cold.registry))
  ociRows.push({
    measure: `… wall time until the last client has every blob, s`,
    larder: larderCell(cold.larder, (v) => v.wallSeconds.toFixed(2)),
    reference: show(cold.registry, (v) => v.wallSeconds.toFixed(2)),
    ratio: times(wallRatio),
    target: "≤ 1.00× registry proxy",
    met: wallRatio === undefined ? undefined : wallRatio <= 1
  })
  await stopPeers()
  await ociFixtures.close()
  ociFixtures = undefined
}

const rawSection = async () => {
  const chosen = selectedPeers().filter((p) => p !== "registry")
  log(`building bodies and starting the upstream (peers: ${chosen.join(", ")})`)
  upstream = await startUpstream()
  raw.registerFixtures(upstream, chosen)
  link = await startLink({ targetPort: upstream.port, bytesPerSecond: raw.settings.wanBytesPerSecond })
  const origins = { [raw.repositories.direct]: `${upstream.url}/`, [raw.repositories.wan]: `${link.url}/` }
  if (chosen.includes("larder")) {
    peers.set("larder", await startLarder(origins).catch((error: Error) => error))
    const larder = peers.get("larder")
    if (larder instanceof Error) {
      failed = true
      notes.push(`larder did not start: ${larder.message.slice(0, 2000)}`)
    }
  }
  if (chosen.includes("nginx")) peers.set("nginx", await startNginxPeer(tools.nginx, origins, cacheLockTimeout))
  log(`started ${[...peers].map(([n, p]) => `${n}${p instanceof Error ? " (FAILED)" : ` pid ${p.pid}`}`).join(", ")}`)

  const s = raw.settings
  const higher = { rounds: 2, better: (a: number, b: number) => a > b }
  const rate = await measure("1 KiB hit rate", (p) => raw.hitRate(ctx(), p), (v) => `${v.toFixed(0)} req/s`, higher)
  const rateRatio = ratioOf(rate.larder, rate.nginx)
  rows.push({
    measure: `1 KiB cache hit, req/s (${s.hitRate.connections} connections, wrk ${s.hitRate.seconds} s, best of 2)`,
    larder: larderCell(rate.larder, fixed(0)),
    reference: show(rate.nginx, fixed(0)),
    ratio: times(rateRatio),
    target: "≥ 0.70× nginx",
    met: rateRatio === undefined ? undefined : rateRatio >= 0.7
  })

  const throughput = await measure("100 MiB hit throughput", (p) => raw.hitThroughput(ctx(), p), (v) => `${v.toFixed(0)} MB/s`, higher)
  const throughputRatio = ratioOf(throughput.larder, throughput.nginx)
  rows.push({
    measure: `100 MiB cache hit, MB/s (${s.hitThroughput.clients} parallel clients × ${s.hitThroughput.rounds} rounds, best of 2)`,
    larder: larderCell(throughput.larder, fixed(0)),
    reference: show(throughput.nginx, fixed(0)),
    ratio: times(throughputRatio),
    target: "≥ 0.90× nginx",
    met: throughputRatio === undefined ? undefined : throughputRatio >= 0.9
  })

  const originLabels = { direct: "loopback-speed origin", wan: `origin behind a ${s.wanBytesPerSecond / 1e6} MB/s link` } as const
  for (const origin of ["direct", "wan"] as const) {
    const herd = await measure(
      `cold herd, ${originLabels[origin]}`,
      (p) => raw.coldHerd(ctx(), p, origin),
      (v) => `${v.upstreamFetches} fetch(es), single ${v.singleSeconds.toFixed(2)} s, last of ${s.coldHerd.clients} ${v.lastClientSeconds.toFixed(2)} s`
    )
    rows.push({
      measure: `${s.coldHerd.clients} cold clients on one 100 MiB object, ${originLabels[origin]}: upstream fetches`,
      larder: larderCell(herd.larder, (v) => String(v.upstreamFetches)),
      reference: show(herd.nginx, (v) => String(v.upstreamFetches)),
      ratio: "—",
      target: "larder: 1",
      met: isValue(herd.larder) ? herd.larder.upstreamFetches === 1 : undefined
    })
    const slowdown = (v: raw.ColdHerd) => `${v.slowdown.toFixed(2)}× (${v.lastClientSeconds.toFixed(2)} s / ${v.singleSeconds.toFixed(2)} s)`
    rows.push({
      measure: `… last client's time / one cold client's time, ${originLabels[origin]}`,
      larder: larderCell(herd.larder, slowdown),
      reference: show(herd.nginx, slowdown),
      // the two slowdowns have different baselines; compare the herds' absolute times instead
      ratio: lastClientRatio(herd.larder, herd.nginx),
      target: "larder: ≤ 1.20×",
      met: isValue(herd.larder) ? herd.larder.slowdown <= 1.2 : undefined
    })
  }

  const memory = await measure(
    "streaming memory",
    (p) => raw.streamingMemory(ctx(), p),
    (v) => `peak RSS ${mib(v.sampledPeakBytes)} MiB (VmHWM ${mib(v.highWaterBytes)}, anon ${mib(v.sampledPeakAnonBytes)}), ${v.aggregateMBps.toFixed(0)} MB/s`
  )
  const peakOf = (v: raw.StreamingMemory) => Math.max(v.sampledPeakBytes, v.highWaterBytes)
  const peakCell = (v: raw.StreamingMemory) => `${mib(peakOf(v))} MiB (anon ${mib(v.sampledPeakAnonBytes)} MiB)`
  rows.push({
    measure: `Peak RSS while ${s.streamingMemory.clients} clients stream a cached 1 GiB object`,
    larder: larderCell(memory.larder, peakCell),
    reference: show(memory.nginx, peakCell),
    ratio: times(ratioOf(isValue(memory.larder) ? peakOf(memory.larder) : undefined, isValue(memory.nginx) ? peakOf(memory.nginx) : undefined)),
    target: "larder: ≤ 200 MiB",
    met: isValue(memory.larder) ? peakOf(memory.larder) <= 200 * 2 ** 20 : undefined
  })
  await stopPeers()
  await link?.close()
  await upstream?.close()
  link = upstream = undefined
}

const lastClientRatio = (larder: Figure<raw.ColdHerd>, nginx: Figure<raw.ColdHerd>) => {
  const ratio = ratioOf(isValue(larder) ? larder.lastClientSeconds : undefined, isValue(nginx) ? nginx.lastClientSeconds : undefined)
  return ratio === undefined ? "—" : `${times(ratio)} (last client's time)`
}
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
const ctx = (): raw.Context => ({ tools, upstream: upstream!, note: (text) => (notes.push(text), log(`note: ${text}`)) })

const method = [
  "Both peers sit in front of the same local upstream fixture (test/support/upstream.ts) and are asked for the same URLs, /repository/<name>/<path>; they run one after the other for each measurement, never at the same time.",
  `nginx: worker_processes 1, proxy_cache (use_temp_path off, sendfile on, keep-alive to the origin), proxy_cache_lock on with proxy_cache_lock_timeout and proxy_cache_lock_age raised to ${cacheLockTimeout} (their 5 s defaults would let waiting clients fetch from the origin themselves), config generated by bench/peers/nginx.ts in a temp prefix.`,
  `Hit rate: wrk -t2 -c${raw.settings.hitRate.connections}, ${raw.settings.hitRate.warmupSeconds} s warm-up then ${raw.settings.hitRate.seconds} s measured, after one GET filled the cache. Throughput and downloads: curl processes writing to /dev/null; MB = 10^6 bytes.`,
  `Cold herd: one client on a fresh object (the baseline), then ${raw.settings.coldHerd.clients} clients started together on another fresh object; the figure is the time from starting them to the last one finishing, over the baseline. Run twice: against the origin at loopback speed, and through bench/link.ts, a ${raw.settings.wanBytesPerSecond / 1e6} MB/s link shared by all origin connections (a stand-in for the WAN to a real registry). At loopback speed the herd's time is bounded by pushing ${raw.settings.coldHerd.clients} × 100 MiB through the cache on this machine's cores rather than by the origin.`,
  "Memory: the peer's process tree (larder's node process; nginx master + worker), VmRSS summed and sampled every 100 ms, and VmHWM reset through /proc/<pid>/clear_refs just before the clients start; the larger is reported. anon = RssAnon, i.e. without file-backed pages such as an mmapped store or sendfile.",
  `Hit rate and throughput run twice with the peers taking turns in alternating order; the better figure of each peer counts. Before every peer's turn the bench waits (up to 20 s) until the machine is at most ${quietBusy * 100}% busy.`
]

try {
  await main()
} catch (error) {
  failed = true
  notes.push(`bench aborted: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  console.error(error)
} finally {
  await cleanup()
  clearTimeout(watchdog)
}

const sections: Section[] = []
if (rows.length > 0) {
  sections.push({
    title: "Raw proxy repository: larder vs nginx proxy_cache",
    table: markdownTable(rows),
    after: "Where the time goes, for the targets larder misses: [PROFILE.md](PROFILE.md).",
    method
  })
}
if (ociRows.length > 0) {
  sections.push({
    title: "Container images: larder vs docker-registry in proxy mode",
    table: markdownTable(ociRows, "registry proxy"),
    method: oci.method()
  })
}
if (npmRows.length > 0) {
  sections.push({ title: "npm: larder vs verdaccio", table: markdownTable(npmRows, "verdaccio"), method: packages.method().slice(0, 1) })
}
if (aptRows.length > 0) {
  sections.push({ title: "apt: larder vs apt-cacher-ng", table: markdownTable(aptRows, "apt-cacher-ng"), method: packages.method().slice(1) })
}
for (const section of sections) console.log(`\n${section.title}\n\n${section.table}\n`)
for (const note of notes) console.log(`note: ${note}`)
writeResults(resultsFile, {
  command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
  date: new Date(),
  machine: machine(tools, ociRows.length > 0 ? registryBinary : undefined),
  durationSeconds: (performance.now() - started) / 1000,
  sections,
  notes
})
console.log(`wrote ${resultsFile}`)
process.exit(failed ? 1 : 0)
