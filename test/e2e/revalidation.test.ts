// Stale content: revalidated with conditional requests after contentMaxAge; served stale (and
// counted) when the upstream fails or is gone; redirects followed.
import t from "tap"
import { startAppliance } from "../support/appliance.ts"
import { metricValue, send } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const upstream = await startUpstream()
const elsewhere = await startUpstream("127.0.0.3")
// contentMaxAge 0: every request after the first revalidates
const appliance = await startAppliance({
  repositories: [
    { name: "raw-codehost", format: "raw", proxy: { remoteUrl: upstream.url + "/", contentMaxAge: 0 } }
  ]
})
t.teardown(async () => {
  await appliance.stop()
  await elsewhere.close()
})
const lan = appliance.lanUrl
const metrics = async () =>
  (await send(lan, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString()

t.test("revalidation sends a conditional request; 304 keeps the cached bytes", async (t) => {
  upstream.routes.set("/v.txt", { body: "version 1\n", headers: { etag: '"v1"' } })
  t.equal((await send(lan, "/repository/raw-codehost/v.txt")).body.toString(), "version 1\n")
  const again = await send(lan, "/repository/raw-codehost/v.txt")
  t.equal(again.body.toString(), "version 1\n")
  const conditional = upstream.requests.filter((r) => r.path === "/v.txt")
  t.equal(conditional.length, 2)
  t.equal(conditional[1].headers["if-none-match"], '"v1"', "the revalidation was conditional")
  upstream.routes.set("/v.txt", { body: "version 2\n", headers: { etag: '"v2"' } })
  t.equal((await send(lan, "/repository/raw-codehost/v.txt")).body.toString(), "version 2\n", "changed content is fetched")
})

t.test("upstream 503 or gone: the stale copy is served and counted", async (t) => {
  upstream.routes.set("/s.txt", { body: "cached\n" })
  t.equal((await send(lan, "/repository/raw-codehost/s.txt")).status, 200)
  upstream.routes.set("/s.txt", { status: 503, body: "down", headers: { "retry-after": "30" } })
  const stale = await send(lan, "/repository/raw-codehost/s.txt")
  t.equal(stale.status, 200)
  t.equal(stale.body.toString(), "cached\n")
  t.equal(metricValue(await metrics(), "larder_cache_requests_total", { repository: "raw-codehost", result: "stale" }), 1)
  upstream.routes.set("/new.txt", { status: 503, body: "down", headers: { "retry-after": "30" } })
  const uncached = await send(lan, "/repository/raw-codehost/new.txt")
  t.equal(uncached.status, 503, "without a stale copy the 503 passes through")
  t.equal(uncached.headers["retry-after"], "30")
  await upstream.close()
  const gone = await send(lan, "/repository/raw-codehost/s.txt")
  t.equal(gone.status, 200, "served while the upstream is unreachable")
  t.equal(gone.body.toString(), "cached\n")
  t.equal(metricValue(await metrics(), "larder_cache_requests_total", { repository: "raw-codehost", result: "stale" }), 2)
  const missing = await send(lan, "/repository/raw-codehost/never-seen.txt")
  t.equal(missing.status, 502)
  t.match(missing.body.toString(), /unreachable/, "an unreachable upstream is named")
})

t.test("redirects to another host are followed", async (t) => {
  const redirecting = await startUpstream()
  t.teardown(() => redirecting.close())
  elsewhere.routes.set("/real/file.bin", { body: "moved content\n" })
  redirecting.routes.set("/moved.bin", { status: 302, headers: { location: `${elsewhere.url}/real/file.bin` } })
  const other = await startAppliance({
    repositories: [{ name: "raw-codehost", format: "raw", proxy: { remoteUrl: redirecting.url + "/" } }]
  })
  t.teardown(() => other.stop())
  const reply = await send(other.lanUrl, "/repository/raw-codehost/moved.bin")
  t.equal(reply.status, 200)
  t.equal(reply.body.toString(), "moved content\n")
  t.equal(elsewhere.count("/real/file.bin"), 1)
})

t.test("at most --upstream-concurrency requests are open to one upstream", async (t) => {
  const slow = await startUpstream()
  t.teardown(() => slow.close())
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  for (let i = 0; i < 6; i++) slow.routes.set(`/slow/${i}.bin`, { body: Buffer.alloc(1000, i), pauseAfter: { bytes: 10, until: held } })
  const limited = await startAppliance({
    repositories: [{ name: "raw-codehost", format: "raw", proxy: { remoteUrl: slow.url + "/" } }],
    args: ["--upstream-concurrency", "2"]
  })
  t.teardown(() => limited.stop())
  const downloads = Array.from({ length: 6 }, (_, i) => send(limited.lanUrl, `/repository/raw-codehost/slow/${i}.bin`))
  // wait until the first two are open upstream, give the others time to queue, then let them run
  while (slow.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(slow.requests.length, 2, "the other four wait for a permit")
  release()
  const replies = await Promise.all(downloads)
  t.same(replies.map((r) => r.status), [200, 200, 200, 200, 200, 200])
  t.same(replies.map((r, i) => r.body.equals(Buffer.alloc(1000, i))), [true, true, true, true, true, true])
  t.equal(slow.maxConcurrent(), 2, "never more than two at once")
})
