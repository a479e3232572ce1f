// The blob store quota against the real appliance: concurrent fetches never push the store over
// --blobstore-quota, every client gets intact bytes, a blob being served is not evicted under it,
// and a kill -9 in the middle of evicting leaves a store whose index and files agree.
import { createHash } from "node:crypto"
import { rmSync } from "node:fs"
import { get } from "node:http"
import { join } from "node:path"
import t from "tap"
import { listTree } from "../support/files.ts"
import { startAppliance, tempDir, type Appliance } from "../support/appliance.ts"
import { metricValue, send, sha256 } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const KiB = 1024
const MiB = 1024 * KiB
const upstream = await startUpstream()
const scratch = tempDir("larder-quota-")
const started: Array<Appliance> = []
t.teardown(async () => {
  for (const appliance of started) await appliance.stop()
  await upstream.close()
  rmSync(scratch, { recursive: true, force: true })
})

/** distinct bytes per name */
const object = (name: string, size: number) => {
  const seed = createHash("sha256").update(name).digest()
  const body = Buffer.alloc(size)
  for (let i = 0; i < size; i += seed.length) seed.copy(body, i)
  upstream.routes.set(`/files/${name}`, { body })
  return { name, size, digest: sha256(body) }
}
const small = Array.from({ length: 60 }, (_, i) => object(`small-${i}.bin`, 20 * KiB + ((i * 7919) % 180) * KiB))
const largest = Math.max(...small.map((o) => o.size))

const start = (quota: string, dataDir = join(scratch, `data-${started.length}`)) =>
  startAppliance({
    dataDir,
    repositories: [{ name: "files", format: "raw", proxy: { remoteUrl: upstream.url + "/files/", contentMaxAge: -1 } }],
    args: ["--blobstore-quota", quota]
  }).then((appliance) => (started.push(appliance), appliance))
const metrics = async (appliance: Appliance) =>
  (await send(appliance.webUrl, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString()
/** what the blob files on disk hold */
const onDisk = (dataDir: string) => {
  const files = [...listTree(join(dataDir, "blobs")).values()]
  return { files: files.length, bytes: files.reduce((sum, stat) => sum + Number(stat.size), 0) }
}
/** 8 clients requesting objects in a fixed order; returns how many answers were not the object's bytes */
const load = async (appliance: Appliance, requests: number, objects = small) => {
  let next = 0
  let bad = 0
  const worker = async () => {
    while (next < requests) {
      const o = objects[(next++ * 7 + 3) % objects.length]
      const reply = await send(appliance.lanUrl, `/repository/files/${o.name}`).catch(() => undefined)
      // a connection error ends this client (the crash test kills the appliance under it)
      if (reply === undefined) {
        bad++
        return
      }
      if (reply.status !== 200 || reply.sha256 !== o.digest) bad++
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return bad
}

t.test("concurrent fetches never take the store over its quota; every body is intact", async (t) => {
  const appliance = await start("2MiB")
  let peak = 0
  let polling = true
  const poller = (async () => {
    while (polling) {
      peak = Math.max(peak, metricValue(await metrics(appliance), "larder_blobstore_bytes"))
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()
  const bad = await load(appliance, 600)
  polling = false
  await poller
  const text = await metrics(appliance)
  t.equal(bad, 0, "every response had the object's bytes")
  t.equal(metricValue(text, "larder_blobstore_quota_bytes"), 2 * MiB)
  t.ok(metricValue(text, "larder_blobstore_evictions_total") > 0, `evictions happened (${metricValue(text, "larder_blobstore_evictions_total")})`)
  t.ok(metricValue(text, "larder_blobstore_evicted_bytes_total") > 0)
  t.ok(peak <= 2 * MiB + largest, `peak ${peak} bytes ≤ quota + one object (${2 * MiB + largest})`)
  t.ok(peak <= 2 * MiB, `in fact within the quota: eviction runs before a blob is counted (${peak})`)
  const page = (await send(appliance.webUrl, "/", { headers: { authorization: appliance.auth } })).body.toString()
  t.match(page, /of a <strong>2\.0 MiB<\/strong> quota <meter [^>]*><\/meter> \d+\.\d%; \d+ evicted since start/, "the web UI shows the quota, its use and the evictions")
  await new Promise((resolve) => setTimeout(resolve, 200))
  const disk = onDisk(appliance.dataDir)
  t.same(disk, { files: metricValue(text, "larder_blobstore_blobs"), bytes: metricValue(text, "larder_blobstore_bytes") }, "the files on disk are what the index counts")
})

t.test("a blob being served is not evicted: the slow client gets it intact and it stays cached", async (t) => {
  const appliance = await start("40MiB")
  const big = object("big.bin", 24 * MiB)
  const fillers = Array.from({ length: 30 }, (_, i) => object(`filler-${i}.bin`, MiB))
  t.equal((await send(appliance.lanUrl, "/repository/files/big.bin")).sha256, big.digest, "cached")

  // a client that reads the first bytes and then stops reading
  const chunks: Array<Buffer> = []
  let response: import("node:http").IncomingMessage | undefined
  await new Promise<void>((resolve, reject) => {
    get(`${appliance.lanUrl}/repository/files/big.bin`, (res) => {
      response = res
      res.once("data", (chunk: Buffer) => {
        chunks.push(chunk)
        res.pause()
        resolve()
      })
    }).on("error", reject)
  })
  t.equal(await load(appliance, 60, fillers), 0, "30 MiB of other objects fetched meanwhile")
  t.ok(metricValue(await metrics(appliance), "larder_blobstore_evictions_total") > 0, "the quota forced evictions")
  t.equal(upstream.count("/files/big.bin"), 1, "the big blob was not evicted while it was being served")

  const done = new Promise<void>((resolve) => response!.on("end", () => resolve()))
  response!.on("data", (chunk: Buffer) => chunks.push(chunk))
  response!.resume()
  await done
  t.equal(sha256(Buffer.concat(chunks)), big.digest, "the slow client got every byte")
})

t.test("kill -9 while evicting: after restart the index and the files agree and every object is served intact", async (t) => {
  const dataDir = join(scratch, "crash")
  const first = await start("1MiB", dataDir)
  const running = load(first, 100_000)
  await new Promise((resolve) => setTimeout(resolve, 400))
  const before = metricValue(await metrics(first), "larder_blobstore_evictions_total")
  t.ok(before > 0, `evicting when killed (${before} evictions so far)`)
  await first.kill9()
  await running

  const second = await start("1MiB", dataDir)
  t.match(second.output(), /store repaired: \d+ temp files removed, \d+ entries with missing blobs dropped, \d+ orphan blobs removed/)
  const text = await metrics(second)
  t.same(onDisk(dataDir), { files: metricValue(text, "larder_blobstore_blobs"), bytes: metricValue(text, "larder_blobstore_bytes") }, "index and files agree after the repair")
  t.ok(metricValue(text, "larder_blobstore_bytes") <= MiB, "within the quota")
  for (const o of small) {
    const reply = await send(second.lanUrl, `/repository/files/${o.name}`)
    if (reply.status !== 200 || reply.sha256 !== o.digest) t.fail(`${o.name}: ${reply.status}`)
  }
  t.pass("all 60 objects served intact after the restart")
})
