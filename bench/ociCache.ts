// The container-image benchmark: larder's docker proxy repository against Debian's docker-registry
// in pull-through (proxy) mode, both in front of the same origin registry (docker-registry behind
// test/support/registry.ts's counting proxy). Blob hit throughput, manifest hit rate, and a cold
// pull of a fresh 5-layer image by 20 concurrent clients.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { mediaTypes, writeImageLayout, type ImageLayout } from "../test/support/ociImage.ts"
import { startRegistry, type Registry } from "../test/support/registry.ts"
import { MiB } from "./bodies.ts"
import { concurrentDownloads, curlDownload, wrkRate } from "./load.ts"
import type { Peer } from "./peers/peer.ts"
import type { Tools } from "./tools.ts"

/** larder's repository name; the registry proxy ignores it */
export const repository = "docker-public"

export const settings = {
  blobHit: { layerFileSize: 64 * MiB, clients: 4, rounds: 3 },
  manifestRate: { connections: 32, warmupSeconds: 2, seconds: 10 },
  coldPull: { clients: 20, layers: 5, layerFileSize: 8 * MiB, blobsAtOnce: 3, maxSeconds: 120 }
} as const

const names = {
  hot: "library/hot",
  cold: (peer: string) => `library/cold-${peer}`
}
const tag = "1"

export interface Fixtures {
  readonly origin: Registry
  readonly hot: ImageLayout
  readonly cold: ReadonlyMap<string, ImageLayout>
  readonly close: () => Promise<void>
}

/** Starts the origin registry and pushes the images (straight to the registry, so not counted):
 * one with a single 64 MiB layer for the hit measures, one fresh 5-layer image per peer. */
export const prepare = async (peerNames: ReadonlyArray<string>): Promise<Fixtures> => {
  const work = mkdtempSync(join(tmpdir(), "larder-bench-oci-"))
  const origin = await startRegistry()
  try {
    const hot = await writeImageLayout(join(work, "hot"), { layers: 1, layerFileSize: settings.blobHit.layerFileSize, tag })
    await origin.push(hot, `${names.hot}:${tag}`)
    const cold = new Map<string, ImageLayout>()
    for (const peer of peerNames) {
      const image = await writeImageLayout(join(work, `cold-${peer}`), {
        layers: settings.coldPull.layers,
        layerFileSize: settings.coldPull.layerFileSize,
        tag
      })
      await origin.push(image, `${names.cold(peer)}:${tag}`)
      cold.set(peer, image)
    }
    // the pushed layouts are not needed any more: the built images keep sizes and digests
    rmSync(work, { recursive: true, force: true })
    origin.requests.length = 0
    return { origin, hot, cold, close: origin.stop }
  } catch (error) {
    await origin.stop()
    rmSync(work, { recursive: true, force: true })
    throw error
  }
}

export interface Context {
  readonly tools: Tools
  readonly fixtures: Fixtures
  readonly note: (text: string) => void
}

const manifestAccept = { accept: mediaTypes.ociManifest }
const blobUrl = (peer: Peer, name: string, digest: string) => peer.urlFor(repository, `v2/${name}/blobs/${digest}`)
const manifestUrl = (peer: Peer, name: string) => peer.urlFor(repository, `v2/${name}/manifests/${tag}`)

/** origin requests under /v2/<name>/ that match `kind` and `method` */
const originCount = (ctx: Context, name: string, kind: "blobs" | "manifests", method?: string) =>
  ctx.fixtures.origin.count((r) => r.path.startsWith(`/v2/${name}/${kind}/`) && (method === undefined || r.method === method))

/** 1. MB/s (10^6 bytes) of a cached ~64 MiB layer to parallel clients */
export const blobHit = async (ctx: Context, peer: Peer): Promise<number> => {
  const s = settings.blobHit
  const layer = ctx.fixtures.hot.layers[0]
  const url = blobUrl(peer, names.hot, layer.digest)
  const fill = await curlDownload({ curl: ctx.tools.curl, url, maxSeconds: 60 })
  if (fill.status !== 200 || fill.bytes !== layer.size) throw new Error(`filling ${url}: got ${fill.status} with ${fill.bytes} of ${layer.size} bytes`)
  const round = () => concurrentDownloads({ curl: ctx.tools.curl, url, clients: s.clients, expectedBytes: layer.size, maxSeconds: 60 })
  await round() // warm-up; also lets a registry proxy finish committing the blob it streamed
  const before = originCount(ctx, names.hot, "blobs", "GET")
  let bytes = 0
  let seconds = 0
  for (let i = 0; i < s.rounds; i++) {
    const batch = await round()
    bytes += batch.bytes
    seconds += batch.wallSeconds
  }
  const extra = originCount(ctx, names.hot, "blobs", "GET") - before
  if (extra > 0) ctx.note(`${peer.name}: ${extra} origin blob GET(s) during what should be blob cache hits`)
  return bytes / seconds / 1e6
}

/** 2. requests/s for GET /v2/<name>/manifests/<tag> naming the OCI manifest type */
export const manifestRate = async (ctx: Context, peer: Peer): Promise<{ readonly rate: number; readonly originRequests: number; readonly requests: number }> => {
  const s = settings.manifestRate
  const url = manifestUrl(peer, names.hot)
  const fill = await curlDownload({ curl: ctx.tools.curl, url, maxSeconds: 30, headers: manifestAccept })
  if (fill.status !== 200 || fill.bytes !== ctx.fixtures.hot.manifest.length) {
    throw new Error(`GET ${url}: ${fill.status} with ${fill.bytes} bytes, expected the ${ctx.fixtures.hot.manifest.length}-byte manifest`)
  }
  const common = { wrk: ctx.tools.wrk, url, connections: s.connections, headers: { Accept: mediaTypes.ociManifest } }
  await wrkRate({ ...common, seconds: s.warmupSeconds })
  // every origin request in the window counts: distribution's proxy also pings GET /v2/ (for an auth challenge) per tag lookup
  const before = ctx.fixtures.origin.requests.length
  const result = await wrkRate({ ...common, seconds: s.seconds })
  if (result.non2xx > 0 || result.socketErrors > 0) {
    ctx.note(`${peer.name}: manifest rate run had ${result.non2xx} non-2xx responses and ${result.socketErrors} socket errors`)
  }
  return { rate: result.requestsPerSecond, originRequests: ctx.fixtures.origin.requests.length - before, requests: result.requests }
}

export interface ColdPull {
  readonly originBlobGets: number
  /** distinct blobs in the image (config + layers): the fewest GETs a pull can make */
  readonly blobs: number
  readonly originManifestRequests: number
  readonly wallSeconds: number
  readonly bytes: number
}

/** 3. `clients` concurrent pulls of a fresh image: each GETs the manifest by tag, then the config
 * and layers, `blobsAtOnce` at a time (Docker's default of concurrent downloads), with curl. */
export const coldPull = async (ctx: Context, peer: Peer): Promise<ColdPull> => {
  const s = settings.coldPull
  const image = ctx.fixtures.cold.get(peer.name)
  if (image === undefined) throw new Error(`no cold image was pushed for ${peer.name}`)
  const name = names.cold(peer.name)
  const blobs = [{ digest: image.configDigest, size: image.config.length }, ...image.layers.map((l) => ({ digest: l.digest, size: l.size }))]
  const blobGetsBefore = originCount(ctx, name, "blobs", "GET")
  const requestsBefore = ctx.fixtures.origin.requests.length
  const manifestsBefore = originCount(ctx, name, "manifests")
  let bytes = 0
  const check = (what: string, d: { status: number; bytes: number }, size: number) => {
    if (d.status !== 200 || d.bytes !== size) throw new Error(`${peer.name} cold pull: ${what} answered ${d.status} with ${d.bytes} of ${size} bytes`)
    bytes += d.bytes
  }
  const pull = async () => {
    const manifest = await curlDownload({ curl: ctx.tools.curl, url: manifestUrl(peer, name), maxSeconds: s.maxSeconds, headers: manifestAccept })
    check("the manifest", manifest, image.manifest.length)
    const queue = [...blobs]
    const worker = async () => {
      for (let blob = queue.shift(); blob !== undefined; blob = queue.shift()) {
        check(blob.digest, await curlDownload({ curl: ctx.tools.curl, url: blobUrl(peer, name, blob.digest), maxSeconds: s.maxSeconds }), blob.size)
      }
    }
    await Promise.all(Array.from({ length: s.blobsAtOnce }, worker))
  }
  const t0 = performance.now()
  await Promise.all(Array.from({ length: s.clients }, pull))
  const wallSeconds = (performance.now() - t0) / 1000
  // what reached the origin, by method, kind and status, e.g. "GET blobs 200 × 126"
  const breakdown = new Map<string, number>()
  for (const r of ctx.fixtures.origin.requests.slice(requestsBefore)) {
    const key = `${r.method} ${/\/(blobs|manifests)\//.exec(r.path)?.[1] ?? r.path} ${r.status}`
    breakdown.set(key, (breakdown.get(key) ?? 0) + 1)
  }
  ctx.note(`${peer.name} cold pull, origin requests: ${[...breakdown].map(([k, n]) => `${k} × ${n}`).join(", ")}`)
  return {
    originBlobGets: originCount(ctx, name, "blobs", "GET") - blobGetsBefore,
    blobs: blobs.length,
    originManifestRequests: originCount(ctx, name, "manifests") - manifestsBefore,
    wallSeconds,
    bytes
  }
}

export const coldImageMiB = () => (settings.coldPull.layers * settings.coldPull.layerFileSize) / MiB

export const method = (): string[] => [
  "Origin: Debian's docker-registry behind test/support/registry.ts's counting proxy (in the bench's node process); the images are pushed straight to the registry with skopeo, so only the peers' requests are counted. Layers are gzip'd tars of random bytes (incompressible), built offline by test/support/ociImage.ts.",
  "registry proxy: a second docker-registry process, `proxy: { remoteurl: <origin counting proxy> }` in its own config.yml, filesystem storage in its own temp dir, asked at /v2/<name>/…; larder: a docker proxy repository (metadataMaxAge 1440 min) asked at /repository/docker-public/v2/<name>/….",
  `Blob hit: one ${settings.blobHit.layerFileSize / MiB} MiB layer, filled by one GET and a warm-up round, then ${settings.blobHit.clients} parallel curl clients × ${settings.blobHit.rounds} rounds; bytes over summed round wall time; MB = 10^6 bytes.`,
  `Manifest hit: wrk -t2 -c${settings.manifestRate.connections} with \`Accept: ${mediaTypes.ociManifest}\` on /manifests/<tag>, ${settings.manifestRate.warmupSeconds} s warm-up then ${settings.manifestRate.seconds} s measured. distribution's proxy mode resolves a tag against the remote on every request (a HEAD to the origin, falling back to its cache only when the origin fails), so its figure includes a round trip to the origin through the counting proxy (two, in fact: it also pings GET /v2/ for an auth challenge each time when the origin asks for none); that is how it behaves in production too. The origin-request count in the cell is every request the origin saw during the measured 10 s.`,
  `Cold pull: a fresh ${settings.coldPull.layers}-layer image (${settings.coldPull.layers} × ${settings.coldPull.layerFileSize / MiB} MiB + config) per peer; ${settings.coldPull.clients} clients start together, each GETs the manifest by tag (OCI Accept), then config and layers ${settings.coldPull.blobsAtOnce} at a time with curl (direct HTTP GETs, not skopeo). Figures: origin blob GETs counted at the origin's proxy (the fewest possible is one per blob: ${settings.coldPull.layers + 1}) and the wall time from start to the last client's last byte.`,
  "Blob hit and manifest hit run twice with the peers taking turns in alternating order; the better figure counts."
]
