// Acceptance 1, 2 and 8 of the foundation: a raw file pulls through the real appliance process
// against a local upstream that counts requests.
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import t from "tap"
import { startAppliance, tempDir } from "../support/appliance.ts"
import { metricValue, send, sha256 } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const upstream = await startUpstream()
const raw = (name: string, extra: object = {}) => ({
  name,
  format: "raw",
  online: true,
  proxy: { remoteUrl: upstream.url + "/files/", contentMaxAge: 1440, metadataMaxAge: 1440 },
  negativeCache: { enabled: true, timeToLive: 1440 },
  ...extra
})
const appliance = await startAppliance({
  repositories: [raw("raw-codehost"), raw("infra-registry", { online: false })]
})
t.teardown(async () => {
  await appliance.stop()
  await upstream.close()
})
const lan = appliance.lanUrl

t.test("two GETs: same bytes, one upstream request; HEAD; ranges", async (t) => {
  const body = randomBytes(300_000)
  upstream.routes.set("/files/tools/archive.tar.gz", { body, headers: { "content-type": "application/gzip" } })
  const path = "/repository/raw-codehost/tools/archive.tar.gz"
  const first = await send(lan, path)
  const second = await send(lan, path)
  t.equal(first.status, 200)
  t.equal(second.status, 200)
  t.equal(first.sha256, sha256(body), "first body is the upstream's bytes")
  t.equal(second.sha256, sha256(body), "second body is the upstream's bytes")
  t.equal(upstream.count("/files/tools/archive.tar.gz"), 1, "upstream was asked once")
  t.equal(second.headers["content-type"], "application/gzip", "upstream content type kept")
  t.equal(second.headers["content-length"], String(body.length))
  t.equal(second.headers.etag, `"${sha256(body)}"`, "ETag is the content digest")

  const head = await send(lan, path, { method: "HEAD" })
  t.equal(head.status, 200)
  t.equal(head.headers["content-length"], String(body.length), "HEAD declares the length")
  t.equal(head.body.length, 0, "HEAD has no body")

  const range = await send(lan, path, { headers: { range: "bytes=1000-1999" } })
  t.equal(range.status, 206)
  t.equal(range.headers["content-range"], `bytes 1000-1999/${body.length}`)
  t.same(range.body, body.subarray(1000, 2000), "range returns exactly those bytes")

  const suffix = await send(lan, path, { headers: { range: "bytes=-10" } })
  t.same(suffix.body, body.subarray(body.length - 10), "suffix range")

  const unsatisfiable = await send(lan, path, { headers: { range: `bytes=${body.length + 5}-` } })
  t.equal(unsatisfiable.status, 416)
  t.equal(unsatisfiable.headers["content-range"], `bytes */${body.length}`)

  const notModified = await send(lan, path, { headers: { "if-none-match": second.headers.etag as string } })
  t.equal(notModified.status, 304, "If-None-Match with the ETag gives 304")
  t.equal(upstream.count("/files/tools/archive.tar.gz"), 1, "none of that reached the upstream")
})

t.test("upstream 404 is cached negatively; 429 passes through uncached", async (t) => {
  const missing = "/repository/raw-codehost/nope/missing.txt"
  const first = await send(lan, missing)
  const second = await send(lan, missing)
  t.equal(first.status, 404)
  t.equal(second.status, 404)
  t.equal(upstream.count("/files/nope/missing.txt"), 1, "second 404 inside the TTL did not reach the upstream")
  t.match(second.body.toString(), /not found upstream of repository "raw-codehost"/)

  upstream.routes.set("/files/limited.bin", { status: 429, body: "slow down", headers: { "retry-after": "120" } })
  const limited = await send(lan, "/repository/raw-codehost/limited.bin")
  t.equal(limited.status, 429)
  t.equal(limited.headers["retry-after"], "120", "Retry-After passed through")
  const again = await send(lan, "/repository/raw-codehost/limited.bin")
  t.equal(again.status, 429)
  t.equal(upstream.count("/files/limited.bin"), 2, "429 was not cached")
  upstream.routes.set("/files/limited.bin", { body: "now fine" })
  const recovered = await send(lan, "/repository/raw-codehost/limited.bin")
  t.equal(recovered.status, 200)
  t.equal(recovered.body.toString(), "now fine")
})

t.test("traversal payloads get 400; unknown repository 404; offline 503", async (t) => {
  const payloads = [
    "/repository/raw-codehost/../../etc/passwd",
    "/repository/raw-codehost/a/../../../etc/passwd",
    "/repository/raw-codehost/%2e%2e/%2e%2e/etc/passwd",
    "/repository/raw-codehost/%2E%2E%2Fetc%2Fpasswd",
    "/repository/raw-codehost/..%2f..%2fetc%2fpasswd",
    "/repository/raw-codehost/..%5c..%5cetc%5cpasswd",
    "/repository/raw-codehost/..\\..\\etc\\passwd",
    "/repository/raw-codehost/file%00.txt",
    "/repository/raw-codehost/./../file.txt",
    "/repository/%2e%2e/raw-codehost/file.txt",
    "/repository/raw-codehost/a/%2e/b"
  ]
  for (const payload of payloads) {
    const reply = await send(lan, payload)
    t.equal(reply.status, 400, `400 for ${payload}`)
  }
  t.equal(upstream.requests.filter((r) => r.path.includes("etc")).length, 0, "no traversal reached the upstream")

  const unknown = await send(lan, "/repository/no-such-repo/file.txt")
  t.equal(unknown.status, 404)
  t.match(unknown.body.toString(), /repository "no-such-repo" does not exist/)

  const offline = await send(lan, "/repository/infra-registry/file.txt")
  t.equal(offline.status, 503)
  t.match(offline.body.toString(), /offline/)

  const oversized = await send(lan, "/repository/raw-codehost/x", { headers: { "x-big": "a".repeat(20_000) } })
  t.equal(oversized.status, 431, "oversized headers refused before routing")
})

t.test("curl downloads through the proxy, and its --path-as-is traversal is refused", async (t) => {
  const body = randomBytes(2_000_000)
  upstream.routes.set("/files/release/tool-1.2.3.zip", { body })
  const out = join(tempDir(), "tool.zip")
  // asynchronously: the upstream fixture lives in this process and must keep answering
  const curl = async (args: Array<string>) => (await promisify(execFile)("curl", args)).stdout
  const code = await curl(["-sS", "-o", out, "-w", "%{http_code}", `${lan}/repository/raw-codehost/release/tool-1.2.3.zip`])
  t.equal(code, "200")
  t.equal(sha256(readFileSync(out)), sha256(body), "curl got the upstream's bytes")
  const traversal = await curl(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--path-as-is", `${lan}/repository/raw-codehost/../../etc/passwd`])
  t.equal(traversal, "400")
})

t.test("status probes and metrics agree with what happened", async (t) => {
  t.equal((await send(lan, "/service/rest/v1/status")).status, 200)
  t.equal((await send(lan, "/service/rest/v1/status/writable")).status, 200)
  const metrics = await send(lan, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })
  const text = metrics.body.toString()
  t.equal(metricValue(text, "larder_cache_requests_total", { repository: "raw-codehost", result: "miss" }), 6)
  t.equal(metricValue(text, "larder_cache_requests_total", { repository: "raw-codehost", result: "negative" }), 1)
  t.ok(metricValue(text, "larder_cache_requests_total", { repository: "raw-codehost", result: "hit" }) >= 6)
  t.equal(metricValue(text, "larder_upstream_requests_total", { repository: "raw-codehost", status: "429" }), 2)
  t.equal(metricValue(text, "larder_blobstore_blobs"), 3, "three distinct blobs stored")
  t.ok(metricValue(text, "process_resident_memory_bytes") > 0, "process defaults present")
  const page = await send(appliance.webUrl, "/")
  t.equal(page.status, 200)
  t.match(page.headers["content-type"], /text\/html/)
  t.match(page.body.toString(), /<code>raw-codehost<\/code>[\s\S]*?<meter /, "the web UI lists the repository with its hit ratio")
  t.match(page.body.toString(), /3<\/strong> blobs/, "and what the blob store holds")
})
