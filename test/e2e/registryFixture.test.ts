// The container-image fixtures themselves: OCI layouts built offline (test/support/ociImage.ts)
// push into a real docker-registry (test/support/registry.ts) and pull back through its counting
// proxy byte for byte; also pins down how registry 2.8 negotiates manifest media types.
import { execFile } from "node:child_process"
import { readFile, readdir, rm } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { gunzipSync } from "node:zlib"
import t from "tap"
import { tempDir } from "../support/appliance.ts"
import { send } from "../support/http.ts"
import { blobPath, mediaTypes, sha256Digest, writeImageLayout, writeIndexLayout } from "../support/ociImage.ts"
import { skopeoCopy, skopeoInspect, startRegistry } from "../support/registry.ts"

const run = promisify(execFile)
const work = tempDir("larder-oci-")
const image = await writeImageLayout(join(work, "single"), { seed: "registry-fixture-single", layers: 3, tag: "3.20" })
const index = await writeIndexLayout(join(work, "multi"), { seed: "registry-fixture-multi", tag: "3.20" })
const registry = await startRegistry()
t.teardown(async () => {
  await registry.stop()
  await rm(work, { recursive: true, force: true })
})

t.test("pushes keep the built digests and bypass the counting proxy", async (t) => {
  t.equal(await registry.push(image, "library/alpine:3.20"), image.manifestDigest)
  t.equal(await registry.push(index, "library/alpine:multi"), index.indexDigest)
  t.equal(registry.requests.length, 0, "nothing went through the proxy")
})

t.test("the layout is well formed", async (t) => {
  const again = await writeImageLayout(join(work, "again"), { seed: "registry-fixture-single", layers: 3, tag: "3.20" })
  t.equal(again.manifestDigest, image.manifestDigest, "same seed, same digests")
  const config = JSON.parse(image.config.toString())
  t.match(config, { architecture: "amd64", os: "linux", rootfs: { type: "layers" } })
  t.same(config.rootfs.diff_ids, image.layers.map((l) => l.diffId))
  for (const layer of image.layers) {
    const blob = await readFile(blobPath(image.dir, layer.digest))
    t.equal(sha256Digest(blob), layer.digest)
    t.equal(sha256Digest(gunzipSync(blob)), layer.diffId, "diff_id is the sha256 of the tar")
    const { stdout } = await run("tar", ["-tvzf", blobPath(image.dir, layer.digest)], { timeout: 10_000 })
    t.match(stdout, new RegExp(` 1024 .* ${layer.fileName}\n$`), "tar lists the one file")
  }
  const top = JSON.parse(await readFile(join(image.dir, "index.json"), "utf8"))
  t.match(top.manifests, [{ mediaType: mediaTypes.ociManifest, digest: image.manifestDigest, annotations: { "org.opencontainers.image.ref.name": "3.20" } }])
})

t.test("skopeo inspect --raw through the proxy returns the built manifest", async (t) => {
  registry.requests.length = 0
  const raw = await skopeoInspect(`${registry.host}/library/alpine:3.20`, true)
  t.equal(sha256Digest(raw), image.manifestDigest)
  t.ok(raw.equals(image.manifest), "byte for byte")
  t.equal(JSON.parse(raw.toString()).mediaType, mediaTypes.ociManifest, "OCI stays OCI")
  t.equal(registry.count("/v2/library/alpine/manifests/3.20"), 1)
})

t.test("skopeo copy pulls every blob through the proxy", async (t) => {
  registry.requests.length = 0
  const dest = join(work, "pulled")
  await skopeoCopy(`${registry.host}/library/alpine:3.20`, `oci:${dest}:x`)
  const top = JSON.parse(await readFile(join(dest, "index.json"), "utf8"))
  t.equal(top.manifests[0].digest, image.manifestDigest, "pulled manifest digest")
  const files = await readdir(join(dest, "blobs", "sha256"))
  t.equal(files.length, image.layers.length + 2, "layers + config + manifest")
  for (const layer of image.layers) t.ok((await readFile(blobPath(dest, layer.digest))).equals(layer.blob), `layer ${layer.digest}`)
  for (const digest of [image.configDigest, ...image.layers.map((l) => l.digest)]) {
    const gets = registry.requests.filter((r) => r.method === "GET" && r.path === `/v2/library/alpine/blobs/${digest}`)
    t.equal(gets.length, 1, `one GET of ${digest}`)
    t.equal(gets[0]?.status, 200)
  }
  const layerGets = registry.count((r) => r.method === "GET" && image.layers.some((l) => r.path.endsWith(`/blobs/${l.digest}`)))
  t.equal(layerGets, 3)
  const layerBytes = registry.requests.filter((r) => image.layers.some((l) => r.path.endsWith(`/blobs/${l.digest}`))).reduce((n, r) => n + r.bytes, 0)
  t.equal(layerBytes, image.layers.reduce((n, l) => n + l.size, 0), "the proxy counted the layer bytes")
})

t.test("the index pushed with all platforms resolves", async (t) => {
  registry.requests.length = 0
  const raw = await skopeoInspect(`${registry.host}/library/alpine:multi`, true)
  t.equal(JSON.parse(raw.toString()).mediaType, mediaTypes.ociIndex)
  t.equal(sha256Digest(raw), index.indexDigest)
  for (const platform of index.images) {
    const manifest = await skopeoInspect(`${registry.host}/library/alpine@${platform.manifestDigest}`, true)
    t.ok(manifest.equals(platform.manifest), `${platform.platform.architecture} manifest by digest`)
  }
  const arm = await skopeoInspect(`${registry.host}/library/alpine:multi`, false, ["--override-arch", "arm64", "--override-os", "linux"])
  t.equal(arm.Architecture, "arm64")
  t.same(arm.Layers, index.images[1].layers.map((l) => l.digest), "the arm64 image's layers")
  t.equal(arm.Digest, index.indexDigest, "skopeo 1.9 reports the list's digest, not the instance's")

  registry.requests.length = 0
  const dest = join(work, "pulled-multi")
  await skopeoCopy(`${registry.host}/library/alpine:multi`, `oci:${dest}:x`, ["--multi-arch", "all"])
  const every = index.images.flatMap((i) => [i.configDigest, ...i.layers.map((l) => l.digest)])
  for (const digest of every) t.equal(registry.count(`/v2/library/alpine/blobs/${digest}`), 1, `pulled ${digest}`)
  const top = JSON.parse(await readFile(join(dest, "index.json"), "utf8"))
  t.equal(top.manifests[0].digest, index.indexDigest)
})

t.test("registry 2.8 serves OCI manifests only to clients that accept them", async (t) => {
  const path = "/v2/library/alpine/manifests/3.20"
  const oci = await send(registry.url, path, { headers: { accept: mediaTypes.ociManifest } })
  t.equal(oci.status, 200)
  t.equal(oci.headers["content-type"], mediaTypes.ociManifest)
  t.equal(oci.headers["docker-content-digest"], image.manifestDigest)
  t.equal((await send(registry.url, path, { headers: { accept: mediaTypes.dockerManifest } })).status, 404, "no conversion to Docker")
  t.equal((await send(registry.url, path, { headers: { accept: "*/*" } })).status, 404, "*/* is not enough")
  const list = "/v2/library/alpine/manifests/multi"
  t.equal((await send(registry.url, list, { headers: { accept: mediaTypes.dockerManifestList } })).status, 404)
  t.equal((await send(registry.url, list, { headers: { accept: mediaTypes.ociIndex } })).status, 200)
  const blob = await send(registry.url, `/v2/library/alpine/blobs/${image.layers[0].digest}`)
  t.equal(blob.sha256, image.layers[0].digest.slice("sha256:".length), "blobs need no Accept")
})

t.test("docker flavour: schema 2 media types, pushed from a dir: layout", async (t) => {
  const docker = await writeIndexLayout(join(work, "docker"), { seed: "registry-fixture-docker", flavour: "docker" })
  t.equal(await registry.push(docker, "library/debian:12"), docker.indexDigest)
  const raw = await skopeoInspect(`${registry.host}/library/debian:12`, true)
  t.equal(JSON.parse(raw.toString()).mediaType, mediaTypes.dockerManifestList)
  t.equal(sha256Digest(raw), docker.indexDigest)
  const amd64 = await send(registry.url, "/v2/library/debian/manifests/12", { headers: { accept: mediaTypes.dockerManifest } })
  t.equal(amd64.headers["docker-content-digest"], docker.images[0].manifestDigest, "a v2-only client gets the amd64 image")
})

t.test("auth in the proxy: basic and Docker-Hub-style bearer tokens", async (t) => {
  for (const auth of [
    { type: "basic", username: "puller", password: "s3cret" },
    { type: "bearer", username: "puller", password: "s3cret" }
  ] as const) {
    const guarded = await startRegistry({ auth })
    t.teardown(() => guarded.stop())
    await guarded.push(image, "library/alpine:3.20")
    await t.rejects(skopeoInspect(`${guarded.host}/library/alpine:3.20`, true, ["--no-creds"]), `${auth.type}: anonymous refused`)
    await t.rejects(skopeoInspect(`${guarded.host}/library/alpine:3.20`, true, ["--creds", "puller:wrong"]), `${auth.type}: bad password refused`)
    const raw = await skopeoInspect(`${guarded.host}/library/alpine:3.20`, true, ["--creds", "puller:s3cret"])
    t.equal(sha256Digest(raw), image.manifestDigest, `${auth.type}: credentials work`)
    if (auth.type === "bearer") {
      t.ok(guarded.count("/token") >= 1, "a token was fetched")
      const challenge = await send(guarded.url, "/v2/library/alpine/manifests/3.20")
      t.equal(challenge.status, 401)
      t.equal(
        challenge.headers["www-authenticate"],
        `Bearer realm="${guarded.url}/token",service="larder-test-registry",scope="repository:library/alpine:pull"`
      )
    }
  }
})

t.test("intercept answers from the proxy instead of the registry", async (t) => {
  registry.intercept = (r) => (r.path.includes("/blobs/") ? { status: 503, body: "down\n" } : undefined)
  t.teardown(() => (registry.intercept = undefined))
  await t.rejects(skopeoCopy(`${registry.host}/library/alpine:3.20`, `oci:${join(work, "failed")}:x`), /503|Service Unavailable/)
  t.ok(registry.count((r) => r.status === 503) >= 1)
})
