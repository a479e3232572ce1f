// The spec's create-or-update flow as platform teams script it against Nexus: a shell script with
// curl (GET, then POST or PUT) run twice against the real appliance. The first run creates and
// updates; the second changes nothing: same objects, and the cache and its hits survive.
import { execFile } from "node:child_process"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import t from "tap"
import { startAppliance, tempDir } from "../support/appliance.ts"
import { metricValue, send } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const run = promisify(execFile)
const script = new URL("../../appliance/scripts/create-or-update.sh", import.meta.url).pathname

const upstream = await startUpstream()
upstream.routes.set("/tools/tool.tar.gz", { body: Buffer.alloc(64 * 1024, 7) })
const appliance = await startAppliance()
const scratch = tempDir("larder-create-or-update-")
t.teardown(async () => {
  await appliance.stop()
  await upstream.close()
  rmSync(scratch, { recursive: true, force: true })
})
writeFileSync(join(scratch, "password"), appliance.password + "\n")

const desired: Record<string, Record<string, unknown>> = {
  "raw/raw-tools": { name: "raw-tools", online: true, proxy: { remoteUrl: upstream.url + "/tools/", contentMaxAge: 1440, metadataMaxAge: 1440 }, negativeCache: { enabled: true, timeToLive: 60 } },
  "npm/npm-proxy": { name: "npm-proxy", online: true, proxy: { remoteUrl: "http://npm.mirror.lan/", contentMaxAge: 1440, metadataMaxAge: 30 }, negativeCache: { enabled: true, timeToLive: 1440 } },
  "docker/docker-public": { name: "docker-public", online: true, proxy: { remoteUrl: "https://registry-1.docker.io", contentMaxAge: 1440, metadataMaxAge: 1440 }, docker: { v1Enabled: false, forceBasicAuth: false }, negativeCache: { enabled: true, timeToLive: 1440 } }
}
const dir = join(scratch, "repositories")
for (const [path, body] of Object.entries(desired)) {
  mkdirSync(join(dir, path.split("/")[0]), { recursive: true })
  writeFileSync(join(dir, `${path}.json`), JSON.stringify(body, null, 2))
}

const createOrUpdate = () =>
  run("sh", [script, dir], {
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", REPO_URL: appliance.webUrl, REPO_USER: appliance.username, REPO_PASSWORD_FILE: join(scratch, "password") }
  })
const get = async (name: string) => {
  const reply = await send(appliance.webUrl, `/service/rest/v1/repositories/${name}`, { headers: { authorization: appliance.auth } })
  return { status: reply.status, body: reply.status === 200 ? JSON.parse(reply.body.toString()) : undefined }
}
const names = ["raw-tools", "npm-proxy", "docker-public"]
const metrics = async () => (await send(appliance.webUrl, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString()

t.test("first run: missing repositories are created, existing ones updated", async (t) => {
  t.equal((await get("raw-tools")).status, 404, "raw-tools does not exist yet")
  const { stdout, stderr } = await createOrUpdate()
  t.equal(stderr, "")
  t.same(stdout.trim().split("\n").sort(), ["created raw-tools", "updated docker-public", "updated npm-proxy"])
  t.equal((await get("raw-tools")).body.proxy.remoteUrl, upstream.url + "/tools/")
  t.equal((await get("npm-proxy")).body.proxy.metadataMaxAge, 30)
  t.equal((await get("npm-proxy")).body.proxy.remoteUrl, "http://npm.mirror.lan/")

  const first = await send(appliance.lanUrl, "/repository/raw-tools/tool.tar.gz")
  t.equal(first.status, 200, "the new repository serves")
  t.equal((await send(appliance.lanUrl, "/repository/raw-tools/tool.tar.gz")).status, 200)
  t.equal(upstream.count("/tools/tool.tar.gz"), 1, "fetched once, then a hit")
})

t.test("second run changes nothing: same objects, cache and hits kept", async (t) => {
  const before = await Promise.all(names.map(get))
  const hitsBefore = metricValue(await metrics(), "larder_cache_requests_total", { repository: "raw-tools", result: "hit" })
  const { stdout } = await createOrUpdate()
  t.same(stdout.trim().split("\n").sort(), ["updated docker-public", "updated npm-proxy", "updated raw-tools"], "every repository exists now: no POST")
  t.same(await Promise.all(names.map(get)), before, "GET returns the same objects")
  const again = await send(appliance.lanUrl, "/repository/raw-tools/tool.tar.gz")
  t.equal(again.status, 200)
  t.equal(upstream.count("/tools/tool.tar.gz"), 1, "still served from the cache, no upstream request")
  t.equal(metricValue(await metrics(), "larder_cache_requests_total", { repository: "raw-tools", result: "hit" }), hitsBefore + 1, "a hit")
})

t.test("the script stops on an error with the status", async (t) => {
  const failure = await run("sh", [script, dir], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", REPO_URL: appliance.webUrl, REPO_USER: "admin", REPO_PASSWORD_FILE: join(scratch, "missing") }
  }).then(() => undefined, (error) => error as { code: number; stderr: string })
  t.ok(failure !== undefined && failure.code !== 0, "non-zero exit")
  writeFileSync(join(scratch, "wrong"), "wrong\n")
  const refused = await run("sh", [script, dir], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", REPO_URL: appliance.webUrl, REPO_USER: "admin", REPO_PASSWORD_FILE: join(scratch, "wrong") }
  }).then(() => undefined, (error) => error as { code: number; stderr: string })
  t.equal(refused?.code, 1)
  t.match(refused?.stderr, /answered 401/)
})
