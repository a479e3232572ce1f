// Replays a trace against the real appliance: one raw repository in front of a local upstream that
// serves every key with its size (distinct bytes per key, so no two keys share a blob), requests
// sent one at a time in trace order, the blob store limited to `quotaBytes`. Byte hit rate is what
// the upstream did not have to send.
import { createHash } from "node:crypto"
import { rmSync } from "node:fs"
import { startAppliance, tempDir } from "../../test/support/appliance.ts"
import { metricValue, send } from "../../test/support/http.ts"
import { startUpstream } from "../../test/support/upstream.ts"
import type { PolicyName } from "../../src/storage/eviction/policies.ts"
import type { Trace } from "./traces.ts"

export interface ReplayResult {
  readonly requests: number
  readonly bytes: number
  readonly upstreamBytes: number
  readonly byteHitRate: number
  readonly objectHitRate: number
  readonly evictions: number
  readonly peakStoreBytes: number
  readonly seconds: number
}

// keys hold ':' and '/'; a hash keeps paths plain and distinct
const pathOf = (repository: string, key: string) => `/${repository}/${createHash("sha1").update(key).digest("hex")}`

const bodyFor = (path: string, size: number): Buffer => {
  const seed = createHash("sha256").update(path).digest()
  const body = Buffer.alloc(size)
  for (let offset = 0; offset < size; offset += seed.length) seed.copy(body, offset)
  return body
}

export const replayOnAppliance = async (
  trace: Trace,
  quotaBytes: number,
  policy: PolicyName,
  deadlineMs: number
): Promise<ReplayResult> => {
  const upstream = await startUpstream()
  for (const event of trace.events) {
    const path = pathOf(event.repository, event.key)
    if (!upstream.routes.has(path)) upstream.routes.set(path, { body: bodyFor(path, event.size) })
  }
  const dataDir = tempDir("larder-replay-")
  const appliance = await startAppliance({
    dataDir,
    // everything immutable, as in the simulator: only the quota decides what is refetched
    repositories: [{ name: "replay", format: "raw", proxy: { remoteUrl: upstream.url + "/", contentMaxAge: -1, metadataMaxAge: -1 } }],
    args: ["--blobstore-quota", String(quotaBytes), "--eviction-policy", policy]
  })
  const metrics = async () => (await send(appliance.webUrl, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString()
  const started = performance.now()
  let bytes = 0
  let peakStoreBytes = 0
  let requests = 0
  try {
    for (const event of trace.events) {
      if (performance.now() - started > deadlineMs) throw new Error(`replay did not finish in ${deadlineMs / 1000} s (${requests} of ${trace.events.length} requests)`)
      const reply = await send(appliance.lanUrl, `/repository/replay${pathOf(event.repository, event.key)}`)
      if (reply.status !== 200 || reply.body.length !== event.size) throw new Error(`${event.key}: ${reply.status}, ${reply.body.length} bytes, expected ${event.size}`)
      bytes += event.size
      requests++
      if (requests % 2000 === 0) peakStoreBytes = Math.max(peakStoreBytes, metricValue(await metrics(), "larder_blobstore_bytes"))
    }
    const text = await metrics()
    peakStoreBytes = Math.max(peakStoreBytes, metricValue(text, "larder_blobstore_bytes"))
    const upstreamBytes = upstream.requests.reduce((sum, request) => sum + (upstream.routes.get(request.path)?.body?.length ?? 0), 0)
    const misses = upstream.requests.length
    return {
      requests,
      bytes,
      upstreamBytes,
      byteHitRate: 1 - upstreamBytes / bytes,
      objectHitRate: 1 - misses / requests,
      evictions: metricValue(text, "larder_blobstore_evictions_total"),
      peakStoreBytes,
      seconds: (performance.now() - started) / 1000
    }
  } finally {
    await appliance.stop()
    await upstream.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** the same trace with every size divided by `factor` (at least 64 bytes), for a replay that fits */
export const scaleTrace = (trace: Trace, factor: number): Trace => ({
  ...trace,
  events: trace.events.map((event) => ({ ...event, size: Math.max(64, Math.round(event.size / factor)) }))
})
