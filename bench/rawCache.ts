// The foundation benchmark: a raw proxy repository's hit rate, hit throughput, cold-herd
// coalescing and memory while streaming, measured the same way for every peer.
import type { Upstream } from "../test/support/upstream.ts"
import { GiB, KiB, MiB, patternBody } from "./bodies.ts"
import { concurrentDownloads, curlDownload, wrkRate } from "./load.ts"
import { sampleRss } from "./memory.ts"
import type { Peer } from "./peers/peer.ts"
import type { Tools } from "./tools.ts"

export const repositories = {
  /** origin at loopback speed */
  direct: "raw-codehost",
  /** origin behind the rate-limited link (bench/link.ts) */
  wan: "raw-wan"
} as const

export const settings = {
  hitRate: { bytes: 1 * KiB, connections: 32, warmupSeconds: 2, seconds: 10 },
  hitThroughput: { bytes: 100 * MiB, clients: 4, rounds: 5 },
  coldHerd: { bytes: 100 * MiB, clients: 50, maxSeconds: 120 },
  streamingMemory: { bytes: 1 * GiB, clients: 32, maxSeconds: 180 },
  wanBytesPerSecond: 10_000_000
} as const

const paths = {
  small: "hit-1k.bin",
  medium: "hit-100m.bin",
  large: "hit-1g.bin",
  cold: (peer: string, origin: string, role: "single" | "herd") => `cold-${peer}-${origin}-${role}.bin`
}

/** Registers every object the benchmark asks for; the 100 MiB cold objects share one Buffer. */
export const registerFixtures = (upstream: Upstream, peerNames: ReadonlyArray<string>): void => {
  const medium = patternBody(settings.hitThroughput.bytes)
  upstream.routes.set(`/${paths.small}`, { body: patternBody(settings.hitRate.bytes) })
  upstream.routes.set(`/${paths.medium}`, { body: medium })
  upstream.routes.set(`/${paths.large}`, { body: patternBody(settings.streamingMemory.bytes) })
  for (const peer of peerNames) {
    for (const origin of Object.keys(repositories)) {
      for (const role of ["single", "herd"] as const) upstream.routes.set(`/${paths.cold(peer, origin, role)}`, { body: medium })
    }
  }
}

export interface Context {
  readonly tools: Tools
  readonly upstream: Upstream
  /** things worth knowing about a figure (errors, unexpected upstream traffic) */
  readonly note: (text: string) => void
}

/** One GET that must return the whole object; fills the cache. */
const fill = async (ctx: Context, url: string, bytes: number, maxSeconds: number) => {
  const d = await curlDownload({ curl: ctx.tools.curl, url, maxSeconds })
  if (d.status !== 200 || d.bytes !== bytes) throw new Error(`filling ${url}: got ${d.status} with ${d.bytes} of ${bytes} bytes`)
  return d
}

/** Warn when a hit benchmark went upstream after the fill. */
const checkNoRefetch = (ctx: Context, peer: Peer, path: string, before: number) => {
  const extra = ctx.upstream.count(`/${path}`) - before
  if (extra > 0) ctx.note(`${peer.name}: ${extra} upstream fetch(es) of ${path} during what should be cache hits`)
}

/** 1. requests/s for a cached 1 KiB object over keep-alive connections */
export const hitRate = async (ctx: Context, peer: Peer): Promise<number> => {
  const s = settings.hitRate
  const url = peer.urlFor(repositories.direct, paths.small)
  await fill(ctx, url, s.bytes, 30)
  const before = ctx.upstream.count(`/${paths.small}`)
  await wrkRate({ wrk: ctx.tools.wrk, url, connections: s.connections, seconds: s.warmupSeconds })
  const result = await wrkRate({ wrk: ctx.tools.wrk, url, connections: s.connections, seconds: s.seconds })
  if (result.non2xx > 0 || result.socketErrors > 0) {
    ctx.note(`${peer.name}: hit rate run had ${result.non2xx} non-2xx responses and ${result.socketErrors} socket errors`)
  }
  checkNoRefetch(ctx, peer, paths.small, before)
  return result.requestsPerSecond
}

/** 2. MB/s (10^6 bytes) delivered of a cached 100 MiB object to parallel clients */
export const hitThroughput = async (ctx: Context, peer: Peer): Promise<number> => {
  const s = settings.hitThroughput
  const url = peer.urlFor(repositories.direct, paths.medium)
  await fill(ctx, url, s.bytes, 60)
  const before = ctx.upstream.count(`/${paths.medium}`)
  const round = () => concurrentDownloads({ curl: ctx.tools.curl, url, clients: s.clients, expectedBytes: s.bytes, maxSeconds: 60 })
  await round() // warm-up
  let bytes = 0
  let seconds = 0
  for (let i = 0; i < s.rounds; i++) {
    const batch = await round()
    bytes += batch.bytes
    seconds += batch.wallSeconds
  }
  checkNoRefetch(ctx, peer, paths.medium, before)
  return bytes / seconds / 1e6
}

export interface ColdHerd {
  readonly upstreamFetches: number
  readonly singleSeconds: number
  readonly lastClientSeconds: number
  /** lastClientSeconds / singleSeconds */
  readonly slowdown: number
}

/** 3. one cold client on a fresh object, then `clients` at once on another fresh object */
export const coldHerd = async (ctx: Context, peer: Peer, origin: keyof typeof repositories): Promise<ColdHerd> => {
  const s = settings.coldHerd
  const single = paths.cold(peer.name, origin, "single")
  const herd = paths.cold(peer.name, origin, "herd")
  const one = await fill(ctx, peer.urlFor(repositories[origin], single), s.bytes, s.maxSeconds)
  const batch = await concurrentDownloads({
    curl: ctx.tools.curl,
    url: peer.urlFor(repositories[origin], herd),
    clients: s.clients,
    expectedBytes: s.bytes,
    maxSeconds: s.maxSeconds
  })
  return {
    upstreamFetches: ctx.upstream.count(`/${herd}`),
    singleSeconds: one.seconds,
    lastClientSeconds: batch.wallSeconds,
    slowdown: batch.wallSeconds / one.seconds
  }
}

export interface StreamingMemory {
  /** largest summed VmRSS of the peer's processes, sampled every 100 ms */
  readonly sampledPeakBytes: number
  /** summed VmHWM of the peer's processes, reset just before the clients start */
  readonly highWaterBytes: number
  /** largest summed RssAnon (heap and buffers, without file-backed mappings such as an mmapped store) */
  readonly sampledPeakAnonBytes: number
  readonly aggregateMBps: number
}

/** 4. peak memory of the peer while `clients` stream a cached 1 GiB object */
export const streamingMemory = async (ctx: Context, peer: Peer): Promise<StreamingMemory> => {
  const s = settings.streamingMemory
  const url = peer.urlFor(repositories.direct, paths.large)
  await fill(ctx, url, s.bytes, s.maxSeconds)
  const before = ctx.upstream.count(`/${paths.large}`)
  const sampler = sampleRss(peer.pid, 100)
  try {
    const batch = await concurrentDownloads({ curl: ctx.tools.curl, url, clients: s.clients, expectedBytes: s.bytes, maxSeconds: s.maxSeconds })
    const memory = sampler.stop()
    checkNoRefetch(ctx, peer, paths.large, before)
    return { ...memory, aggregateMBps: batch.bytes / batch.wallSeconds / 1e6 }
  } finally {
    sampler.stop()
  }
}
