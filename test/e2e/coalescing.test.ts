// Acceptance 3 and 4 of the foundation: 50 concurrent misses share one upstream fetch and stream it
// as it arrives; a truncated upstream body reaches clients as an error and commits nothing.
import { randomBytes } from "node:crypto"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import t from "tap"
import { startAppliance } from "../support/appliance.ts"
import { metricValue, send, sha256 } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const upstream = await startUpstream()
const appliance = await startAppliance({
  repositories: [{ name: "raw-codehost", format: "raw", proxy: { remoteUrl: upstream.url + "/" } }]
})
t.teardown(async () => {
  await appliance.stop()
  await upstream.close()
})

t.test("50 concurrent GETs of an uncached 64 MiB object: one upstream fetch, bytes before the end", async (t) => {
  const clients = 50
  const body = randomBytes(64 * 1024 * 1024)
  // The upstream sends half, then waits until every client has received at least one byte: a
  // design that makes followers wait for the end of the fetch never gets there and times out.
  let release!: () => void
  const allStreaming = new Promise<void>((resolve) => (release = resolve))
  upstream.routes.set("/big/object.bin", { body, pauseAfter: { bytes: body.length / 2, until: allStreaming } })
  const seen = new Set<number>()
  const replies = await Promise.all(
    Array.from({ length: clients }, (_, client) =>
      send(appliance.lanUrl, "/repository/raw-codehost/big/object.bin", {
        hashOnly: true,
        onData: () => {
          if (seen.has(client)) return
          seen.add(client)
          if (seen.size === clients) release()
        }
      }))
  )
  const expected = sha256(body)
  t.equal(seen.size, clients, "every client received bytes while the upstream was paused")
  t.equal(replies.filter((reply) => reply.status === 200).length, clients, "all 200")
  t.equal(replies.filter((reply) => reply.complete && reply.sha256 === expected).length, clients, "all 50 bodies sha256-correct")
  t.equal(upstream.count("/big/object.bin"), 1, "exactly one upstream request")
  const metrics = (await send(appliance.lanUrl, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString()
  t.equal(metricValue(metrics, "larder_cache_requests_total", { repository: "raw-codehost", result: "miss" }), 1)
  t.equal(metricValue(metrics, "larder_cache_requests_total", { repository: "raw-codehost", result: "coalesced" }), clients - 1)
})

t.test("upstream closing at half its Content-Length: client error, nothing committed, refetch works", async (t) => {
  const body = randomBytes(8 * 1024 * 1024)
  upstream.routes.set("/cut/file.bin", { body, truncateAfter: body.length / 2 })
  const cut = await send(appliance.lanUrl, "/repository/raw-codehost/cut/file.bin", { hashOnly: true })
  t.equal(cut.status, 200, "headers were already sent")
  t.equal(cut.complete, false, "the client sees the body end in an error, not a clean short 200")
  t.same(readdirSync(join(appliance.dataDir, "tmp")), [], "no temp file left behind")

  upstream.routes.set("/cut/file.bin", { body })
  const whole = await send(appliance.lanUrl, "/repository/raw-codehost/cut/file.bin", { hashOnly: true })
  t.equal(whole.status, 200)
  t.ok(whole.complete)
  t.equal(whole.sha256, sha256(body), "the refetch has the right bytes")
  t.equal(upstream.count("/cut/file.bin"), 2, "the truncated fetch was not cached")
  const cached = await send(appliance.lanUrl, "/repository/raw-codehost/cut/file.bin", { hashOnly: true })
  t.equal(cached.sha256, sha256(body))
  t.equal(upstream.count("/cut/file.bin"), 2, "then it is served from the cache")
  const metrics = (await send(appliance.lanUrl, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString()
  t.equal(metricValue(metrics, "larder_fetch_failures_total", { repository: "raw-codehost", reason: "Truncated" }), 1, "the truncation is counted")
})
