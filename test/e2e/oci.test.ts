// Container images through larder: skopeo pulls from docker-public, whose upstream is Debian's
// docker-registry behind a counting proxy; the second pull never asks the upstream for content.
import { readFile, rm } from "node:fs/promises"
import { join } from "node:path"
import t from "tap"
import { startAppliance, tempDir } from "../support/appliance.ts"
import { metricValue, send } from "../support/http.ts"
import { writeImageLayout, writeIndexLayout } from "../support/ociImage.ts"
import { skopeoCopy, skopeoInspect, startRegistry } from "../support/registry.ts"

const work = tempDir("larder-oci-e2e-")
const image = await writeImageLayout(join(work, "single"), { seed: "larder-oci-single", layers: 3, tag: "3.20" })
const index = await writeIndexLayout(join(work, "multi"), { seed: "larder-oci-multi", tag: "multi" })
const registry = await startRegistry()
await registry.push(image, "library/alpine:3.20")
await registry.push(index, "library/alpine:multi")
const appliance = await startAppliance({
  repositories: [
    { name: "docker-public", format: "docker", proxy: { remoteUrl: registry.url } },
    { name: "docker-registry3", format: "docker", proxy: { remoteUrl: registry.url } }
  ]
})
const lan = new URL(appliance.lanUrl).host
t.teardown(async () => {
  await appliance.stop()
  await registry.stop()
  await rm(work, { recursive: true, force: true })
})

const pulledManifestDigest = async (dir: string) =>
  JSON.parse(await readFile(join(dir, "index.json"), "utf8")).manifests[0].digest as string
const contentRequests = () => registry.count((r) => /\/blobs\/sha256:|\/manifests\/sha256:/.test(r.path))

t.test("skopeo copy through both URL forms: upstream digests, and a second copy sends no content request upstream", async (t) => {
  const first = join(work, "pull-1")
  await skopeoCopy(`${lan}/docker-public/library/alpine:3.20`, `oci:${first}:x`, ["--preserve-digests"])
  t.equal(await pulledManifestDigest(first), image.manifestDigest, "path-based form: the upstream's manifest digest")
  t.equal(registry.count((r) => r.path.includes("/blobs/")), image.layers.length + 1, "each layer and the config fetched once")
  registry.requests.length = 0
  const second = join(work, "pull-2")
  await skopeoCopy(`${lan}/repository/docker-public/library/alpine:3.20`, `oci:${second}:x`, ["--preserve-digests"])
  t.equal(await pulledManifestDigest(second), image.manifestDigest, "/repository/<name>/ form: same digest")
  t.equal(contentRequests(), 0, "no manifest-by-digest or blob request reached the upstream")
  const raw = await skopeoInspect(`${lan}/docker-public/library/alpine:3.20`, true)
  t.ok(raw.equals(image.manifest), "the manifest bytes are the upstream's, byte for byte")
})

t.test("a multi-arch index pulls with every platform", async (t) => {
  const dest = join(work, "pull-multi")
  await skopeoCopy(`${lan}/docker-public/library/alpine:multi`, `oci:${dest}:x`, ["--multi-arch", "all", "--preserve-digests"])
  t.equal(await pulledManifestDigest(dest), index.indexDigest, "the index digest is the upstream's")
  registry.requests.length = 0
  await skopeoCopy(`${lan}/docker-public/library/alpine:multi`, `oci:${join(work, "pull-multi-2")}:x`, ["--multi-arch", "all", "--preserve-digests"])
  t.equal(contentRequests(), 0, "second multi-arch pull: nothing by digest upstream")
})

t.test("layers shared between repositories are stored once", async (t) => {
  const metrics = async () =>
    metricValue((await send(appliance.lanUrl, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString(), "larder_blobstore_blobs")
  const before = await metrics()
  await skopeoCopy(`${lan}/docker-registry3/library/alpine:3.20`, `oci:${join(work, "pull-r3")}:x`, ["--preserve-digests"])
  t.equal(await metrics(), before, "no new blob for the same image through docker-registry3")
})

t.test("registry errors: missing tag, not a docker request, pushes", async (t) => {
  const missing = await send(appliance.lanUrl, "/repository/docker-public/v2/library/alpine/manifests/v3.20")
  t.equal(missing.status, 404)
  t.equal(JSON.parse(missing.body.toString()).errors[0].code, "MANIFEST_UNKNOWN")
  const again = await send(appliance.lanUrl, "/repository/docker-public/v2/library/alpine/manifests/v3.20")
  t.equal(again.status, 404)
  t.equal(registry.count("/v2/library/alpine/manifests/v3.20"), 1, "the second 404 came from the negative cache")
  const notDocker = await send(appliance.lanUrl, "/repository/docker-public/library/alpine/manifests/3.20")
  t.equal(notDocker.status, 400)
  t.match(notDocker.body.toString(), /Not a docker request/)
  const base = await send(appliance.lanUrl, "/repository/docker-public/v2/")
  t.equal(base.status, 200)
  t.equal(base.headers["docker-distribution-api-version"], "registry/2.0")
  const push = await send(appliance.lanUrl, "/repository/docker-public/v2/library/alpine/blobs/uploads/", { method: "POST" })
  t.equal(push.status, 405)
  t.equal(JSON.parse(push.body.toString()).errors[0].code, "UNSUPPORTED")
})

t.test("bearer-token upstreams: the token is fetched once per scope and reused", async (t) => {
  const guarded = await startRegistry({ auth: { type: "bearer", expiresIn: 300 } })
  t.teardown(() => guarded.stop())
  await guarded.push(image, "team/app:1.0")
  const tokened = await startAppliance({ repositories: [{ name: "docker-codehost", format: "docker", proxy: { remoteUrl: guarded.url } }] })
  t.teardown(() => tokened.stop())
  const host = new URL(tokened.lanUrl).host
  const dest = join(work, "pull-token")
  await skopeoCopy(`${host}/docker-codehost/team/app:1.0`, `oci:${dest}:x`, ["--preserve-digests"])
  t.equal(await pulledManifestDigest(dest), image.manifestDigest)
  t.equal(guarded.count((r) => r.path.startsWith("/token")), 1, "one token request for the repository's pull scope")
  t.ok(guarded.count((r) => r.status === 401) >= 1, "the upstream challenged first")
})

t.test("upstream faults: 429 serves the cached manifest, a corrupt blob is refused, a missing tag is retried after its TTL", async (t) => {
  // metadata always stale, negative entries for 0.02 min (1.2 s): every tag request asks upstream
  const strict = await startAppliance({
    repositories: [{
      name: "docker-public",
      format: "docker",
      proxy: { remoteUrl: registry.url, metadataMaxAge: 0 },
      negativeCache: { enabled: true, timeToLive: 0.02 }
    }]
  })
  t.teardown(() => strict.stop())
  const host = new URL(strict.lanUrl).host
  await skopeoCopy(`${host}/docker-public/library/alpine:3.20`, `oci:${join(work, "pull-strict")}:x`, ["--preserve-digests"])

  registry.requests.length = 0
  const revalidated = await send(strict.lanUrl, "/repository/docker-public/v2/library/alpine/manifests/3.20")
  t.equal(revalidated.status, 200)
  t.same(registry.requests.map((r) => `${r.method} ${r.path}`), ["HEAD /v2/library/alpine/manifests/3.20"], "a stale tag is revalidated with one HEAD (no pull counted upstream)")
  t.equal(revalidated.headers["docker-content-digest"], image.manifestDigest)

  registry.intercept = (r) =>
    r.path.includes("/manifests/")
      ? { status: 429, headers: { "retry-after": "60", "content-type": "application/json" }, body: '{"errors":[{"code":"TOOMANYREQUESTS","message":"pull rate limit"}]}' }
      : undefined
  const cached = await send(strict.lanUrl, "/repository/docker-public/v2/library/alpine/manifests/3.20", { headers: { accept: "application/vnd.oci.image.manifest.v1+json" } })
  t.equal(cached.status, 200, "a rate-limited upstream does not stop a cached manifest")
  t.ok(cached.body.equals(image.manifest))
  const uncached = await send(strict.lanUrl, "/repository/docker-public/v2/library/alpine/manifests/never-pulled")
  t.equal(uncached.status, 429, "a miss gets the 429")
  t.equal(uncached.headers["retry-after"], "60")
  t.equal(JSON.parse(uncached.body.toString()).errors[0].code, "TOOMANYREQUESTS")

  const corrupt = index.images[1].layers[0].digest
  registry.intercept = (r) => (r.path.endsWith(`/blobs/${corrupt}`) ? { status: 200, headers: { "content-type": "application/octet-stream" }, body: Buffer.alloc(index.images[1].layers[0].size, 7) } : undefined)
  const refused = await send(strict.lanUrl, `/repository/docker-public/v2/library/alpine/blobs/${corrupt}`)
  t.equal(refused.complete, false, "the client's body ends in an error")
  registry.intercept = undefined
  const good = await send(strict.lanUrl, `/repository/docker-public/v2/library/alpine/blobs/${corrupt}`)
  t.equal(good.status, 200)
  t.ok(good.complete)
  t.equal(registry.count((r) => r.path.endsWith(`/blobs/${corrupt}`)), 2, "the corrupt copy was not cached")
  const text = (await send(strict.lanUrl, "/service/rest/metrics/prometheus", { headers: { authorization: strict.auth } })).body.toString()
  t.equal(metricValue(text, "larder_fetch_failures_total", { repository: "docker-public", reason: "DigestMismatch" }), 1, "and counted")

  const tag = "/v2/library/alpine/manifests/v9.9"
  t.equal((await send(strict.lanUrl, "/repository/docker-public" + tag)).status, 404)
  t.equal((await send(strict.lanUrl, "/repository/docker-public" + tag)).status, 404)
  t.equal(registry.count(tag), 1, "inside the TTL the upstream is not asked again")
  await new Promise((resolve) => setTimeout(resolve, 1500))
  t.equal((await send(strict.lanUrl, "/repository/docker-public" + tag)).status, 404)
  t.equal(registry.count(tag), 2, "after the TTL it is")
})

t.test("20 clients pulling one uncached image at once: one upstream GET per blob", async (t) => {
  const fresh = await writeImageLayout(join(work, "herd"), { seed: "larder-oci-herd", layers: 5, layerFileSize: 200_000, tag: "1" })
  await registry.push(fresh, "herd/app:1")
  registry.requests.length = 0
  await Promise.all(
    Array.from({ length: 20 }, (_, i) => skopeoCopy(`${lan}/docker-public/herd/app:1`, `oci:${join(work, `herd-${i}`)}:x`, ["--preserve-digests"]))
  )
  for (const digest of [fresh.configDigest, ...fresh.layers.map((l) => l.digest)]) {
    t.equal(registry.count((r) => r.method === "GET" && r.path.endsWith(`/blobs/${digest}`)), 1, `one GET for ${digest.slice(0, 19)}`)
  }
  for (let i = 0; i < 20; i++) t.equal(await pulledManifestDigest(join(work, `herd-${i}`)), fresh.manifestDigest)
})
