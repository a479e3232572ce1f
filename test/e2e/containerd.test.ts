// containerd pulls through larder as a registry mirror: a private containerd (test/support/containerd.ts)
// and `ctr images pull --hosts-dir`, whose hosts.toml for the upstream registry, written by
// `larder client-config containerd`, names larder's /repository/docker-public/v2 endpoint with
// override_path, the form containerd's documentation gives for a path-based mirror. The upstream is Debian's docker-registry behind a counting proxy.
import { execFile } from "node:child_process"
import { readFile, rm } from "node:fs/promises"
import { promisify } from "node:util"
import { parse as parseToml } from "smol-toml"
import { dirname, join } from "node:path"
import t from "tap"
import { nodeBinary, nodeFlags, startAppliance, tempDir, type Appliance } from "../support/appliance.ts"
import { startContainerd, type Containerd } from "../support/containerd.ts"
import { metricValue, send } from "../support/http.ts"
import { writeImageLayout, writeIndexLayout } from "../support/ociImage.ts"
import { startRegistry, type Registry } from "../support/registry.ts"

const run = promisify(execFile)
const main = new URL("../../appliance/main.ts", import.meta.url).pathname
const work = tempDir("larder-containerd-e2e-")
// one teardown, registered first, stops whatever got started (also when a later start-up throws)
const started: { registry?: Registry; appliance?: Appliance; containerd?: Containerd } = {}
t.teardown(async () => {
  await started.containerd?.stop()
  await started.appliance?.stop()
  await started.registry?.stop()
  await rm(work, { recursive: true, force: true })
  // startAppliance writes the repositories file into a temp dir of its own
  const args = started.appliance?.process.spawnargs ?? []
  if (args.includes("--repositories")) await rm(dirname(args[args.indexOf("--repositories") + 1]), { recursive: true, force: true })
})
const image = await writeImageLayout(join(work, "single"), { seed: "larder-containerd-single", layers: 3, tag: "3.20" })
const index = await writeIndexLayout(join(work, "multi"), { seed: "larder-containerd-multi", tag: "multi" })
const registry = (started.registry = await startRegistry())
await registry.push(image, "library/alpine:3.20")
await registry.push(index, "library/alpine:multi")
const appliance = (started.appliance = await startAppliance({
  dataDir: join(work, "appliance"),
  repositories: [{ name: "docker-public", format: "docker", proxy: { remoteUrl: registry.url } }]
}))
const containerd = (started.containerd = await startContainerd())

const lan = new URL(appliance.lanUrl)
const mirror = `http://${lan.host}/repository/docker-public/v2`
// hosts.toml as `larder client-config containerd` writes it, for the repositories larder runs with
const hostsDir = join(work, "certs.d")
const repositoriesFile = appliance.process.spawnargs[appliance.process.spawnargs.indexOf("--repositories") + 1]
await run(nodeBinary, [...nodeFlags, main, "client-config", "containerd", "--lan-host", lan.host, "--repositories", repositoriesFile, "--out", hostsDir], {
  timeout: 60_000,
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }
})
const hostsToml = parseToml(await readFile(join(hostsDir, registry.host, "hosts.toml"), "utf8"))
if (hostsToml.server !== registry.url || !(mirror in (hostsToml.host as object))) throw new Error(`unexpected hosts.toml: ${JSON.stringify(hostsToml)}`)

const ref = `${registry.host}/library/alpine:3.20`
const pullArgs = ["--plain-http", "--hosts-dir", hostsDir, "--snapshotter", "native"]

const metrics = async () =>
  (await send(appliance.lanUrl, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString()
const cacheResults = async () => {
  const text = await metrics()
  const of = (result: string) => metricValue(text, "larder_cache_requests_total", { repository: "docker-public", result })
  return { hit: of("hit"), miss: of("miss"), http: sumOf(text, "larder_http_requests_total", { repository: "docker-public" }) }
}
/** every sample of a metric whose labels include `labels`, summed */
const sumOf = (text: string, name: string, labels: Record<string, string>) =>
  text
    .split("\n")
    .filter((line) => line.startsWith(name + "{") && Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .reduce((sum, line) => sum + Number(line.split(/\s+/).at(-1)), 0)

/** the URLs ctr's resolver requested, from its --debug "do request" lines */
const requestedUrls = (stderr: string) =>
  stderr
    .split("\n")
    .filter((line) => line.includes('msg="do request"'))
    .map((line) => /\burl="?([^"\s]+)"?/.exec(line)?.[1] ?? "")

/** the digests `ctr content ls --quiet` lists in a namespace */
const contentDigests = async (namespace: string) =>
  (await containerd.ctr(["content", "ls", "--quiet"], { namespace })).stdout.split("\n").filter((line) => line.startsWith("sha256:"))

/** `ctr images ls`: the digest the reference points at */
const imageDigest = async (namespace: string, name: string) => {
  const { stdout } = await containerd.ctr(["images", "ls"], { namespace })
  const row = stdout.split("\n").find((line) => line.split(/\s+/)[0] === name)
  return row?.split(/\s+/)[2]
}

const blobGets = (digest: string) => registry.count((r) => r.method === "GET" && r.path.endsWith(`/blobs/${digest}`))

t.test("ctr pulls through the larder mirror; the upstream sees each blob once and never sees containerd", async (t) => {
  const before = await cacheResults()
  const started = Date.now()
  const pull = await containerd.ctr(["images", "pull", ...pullArgs, ref], { debug: true })
  t.comment(`first pull: ${Date.now() - started} ms`)

  t.equal(await imageDigest("default", ref), image.manifestDigest, "ctr images ls: the upstream's manifest digest")
  const content = await contentDigests("default")
  for (const digest of image.blobDigests) t.ok(content.includes(digest), `ctr content ls holds ${digest.slice(0, 19)}`)

  const urls = requestedUrls(pull.stderr)
  t.ok(urls.length >= image.layers.length + 2, `ctr logged its requests (${urls.length})`)
  for (const url of urls) {
    t.ok(url.startsWith(`${mirror}/library/alpine/`), `to the mirror: ${url}`)
    t.match(new URL(url).searchParams.get("ns"), registry.host, "with ns=<upstream host>")
  }

  for (const digest of [image.configDigest, ...image.layers.map((l) => l.digest)]) t.equal(blobGets(digest), 1, `one upstream GET for ${digest.slice(0, 19)}`)
  t.ok(registry.requests.length > 0, "larder asked the upstream")
  t.same(
    registry.requests.filter((r) => r.headers["user-agent"] !== "larder").map((r) => `${r.method} ${r.path} ${r.headers["user-agent"]}`),
    [],
    "every upstream request came from larder, none from containerd"
  )
  t.same(
    registry.requests.filter((r) => !/^\/v2\/(library\/alpine\/(manifests|blobs)\/[^/]+)?$/.test(r.path)).map((r) => `${r.method} ${r.path}`),
    [],
    "upstream requests are only /v2/, manifests and blobs"
  )
  t.equal(registry.count((r) => r.query.includes("ns=")), 0, "larder does not forward containerd's ns= upstream")

  const after = await cacheResults()
  t.ok(after.miss - before.miss >= image.layers.length + 1, `larder counted misses for docker-public (${after.miss - before.miss})`)
  t.ok(after.http - before.http >= urls.length, `larder_http_requests_total{repository="docker-public"} grew by ${after.http - before.http}`)
})

t.test("a second pull in a fresh namespace is served from larder's cache", async (t) => {
  // content is shared between namespaces; remove it so the second pull has to fetch every blob again
  await containerd.ctr(["images", "rm", "--sync", ref])
  t.same(await contentDigests("default"), [], "containerd's content store is empty again")
  registry.requests.length = 0
  const before = await cacheResults()
  const started = Date.now()
  const pull = await containerd.ctr(["images", "pull", ...pullArgs, ref], { namespace: "other", debug: true })
  t.comment(`second pull: ${Date.now() - started} ms`)

  t.equal(await imageDigest("other", ref), image.manifestDigest, "same manifest digest in namespace other")
  const urls = requestedUrls(pull.stderr)
  t.ok(urls.filter((url) => url.includes("/blobs/")).length >= image.layers.length + 1, "containerd fetched the blobs again")
  t.equal(registry.count((r) => r.path.includes("/blobs/")), 0, "no blob request reached the upstream")
  t.equal(registry.count((r) => r.path.includes("/manifests/sha256:")), 0, "nor a manifest by digest")
  const after = await cacheResults()
  t.ok(after.hit - before.hit >= image.layers.length + 1, `larder counted hits (${after.hit - before.hit})`)
  t.equal(after.miss, before.miss, "and no new miss")
})

t.test("a multi-arch index pulled for one platform fetches only that platform's blobs", async (t) => {
  registry.requests.length = 0
  const multi = `${registry.host}/library/alpine:multi`
  await containerd.ctr(["images", "pull", ...pullArgs, "--platform", "linux/amd64", multi], { namespace: "multi" })
  t.equal(await imageDigest("multi", multi), index.indexDigest, "the image is the upstream's index")
  const [amd64, arm64] = index.images
  for (const digest of [amd64.configDigest, ...amd64.layers.map((l) => l.digest)]) t.equal(blobGets(digest), 1, `amd64 blob ${digest.slice(0, 19)} fetched once`)
  for (const digest of [arm64.configDigest, ...arm64.layers.map((l) => l.digest)]) t.equal(blobGets(digest), 0, `arm64 blob ${digest.slice(0, 19)} not fetched`)
  t.same(registry.requests.filter((r) => r.headers["user-agent"] !== "larder").length, 0, "only larder talked to the upstream")
})
