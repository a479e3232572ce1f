// npm acceptance: the real npm installs a scoped package and a package with a chain of
// dependencies through npm-proxy with an empty cache; a second install from a new cache makes no
// upstream tarball request; npm ci works from the lockfile (whose URLs point at larder); a
// tarball that does not match its integrity is refused and not cached; packument forms are cached
// apart; tarball URLs follow the client's host (forwarded headers only from trusted proxies).
import { execFile } from "node:child_process"
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import t from "tap"
import { startAppliance, tempDir } from "../support/appliance.ts"
import { send } from "../support/http.ts"
import { servePackages } from "../support/npmRegistry.ts"
import { startUpstream } from "../support/upstream.ts"

const run = promisify(execFile)

const upstream = await startUpstream()
const appliance = await startAppliance({
  repositories: [{ name: "npm-proxy", format: "npm", proxy: { remoteUrl: upstream.url + "/" } }]
})
const scratch = tempDir("larder-npm-")
t.teardown(async () => {
  await appliance.stop()
  await upstream.close()
  rmSync(scratch, { recursive: true, force: true })
})
const lan = appliance.lanUrl
const port = new URL(lan).port
const registry = `${lan}/repository/npm-proxy/`

await servePackages(upstream, [
  { name: "@larder/scoped", version: "1.0.0" },
  { name: "leaf", version: "2.0.0" },
  { name: "leaf", version: "2.1.0" },
  { name: "mid", version: "1.0.0", dependencies: { leaf: "^2.0.0" }, main: "module.exports = 'mid+' + require('leaf')\n" },
  { name: "top", version: "1.0.0", dependencies: { mid: "^1.0.0" }, main: "module.exports = 'top+' + require('mid')\n" },
  { name: "spoiled", version: "1.0.0" }
], ["spoiled"])

let projects = 0
const project = (dependencies: Record<string, string>) => {
  const dir = join(scratch, `project-${projects++}`)
  mkdirSync(dir)
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true, dependencies }))
  return dir
}
const npm = (dir: string, args: Array<string>) => {
  const userconfig = join(scratch, "npmrc")
  writeFileSync(userconfig, "")
  return run("npm", [...args, "--registry", registry, "--cache", join(dir, ".npm-cache"), "--userconfig", userconfig, "--fund=false", "--update-notifier=false"], {
    cwd: dir,
    timeout: 120_000,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(scratch, "home"), npm_config_registry: registry }
  })
}
const tarballRequests = () => upstream.requests.filter((r) => r.path.endsWith(".tgz")).length
const requireIn = (dir: string, name: string) => run(process.execPath, ["-e", `console.log(require(${JSON.stringify(name)}))`], { cwd: dir })

let lockfile = ""
let first = ""

t.test("npm install of a scoped package and a dependency chain, empty cache", async (t) => {
  first = project({ "@larder/scoped": "^1.0.0", top: "^1.0.0" })
  await npm(first, ["install"]) // audit on: its POST must not break the install
  t.equal((await requireIn(first, "top")).stdout, "top+mid+leaf@2.1.0\n", "the chain resolved to the newest leaf")
  t.equal((await requireIn(first, "@larder/scoped")).stdout, "@larder/scoped@1.0.0\n")
  t.equal(tarballRequests(), 4, "four tarballs fetched upstream once each")
  lockfile = readFileSync(join(first, "package-lock.json"), "utf8")
  const resolved = [...lockfile.matchAll(/"resolved": "([^"]+)"/g)].map((m) => m[1])
  t.equal(resolved.length, 4)
  t.ok(resolved.every((url) => url.startsWith(registry)), "lockfile URLs point at larder")
  t.ok(resolved.includes(`${registry}@larder/scoped/-/scoped-1.0.0.tgz`), "scoped tarball path")
})

t.test("a second install from a new empty cache makes no upstream tarball request", async (t) => {
  const before = tarballRequests()
  const second = project({ "@larder/scoped": "^1.0.0", top: "^1.0.0" })
  await npm(second, ["install", "--no-audit"])
  t.equal((await requireIn(second, "top")).stdout, "top+mid+leaf@2.1.0\n")
  t.equal(tarballRequests(), before, "all tarballs came from larder's cache")
})

t.test("npm ci from the lockfile", async (t) => {
  const third = project({})
  copyFileSync(join(first, "package.json"), join(third, "package.json"))
  writeFileSync(join(third, "package-lock.json"), lockfile)
  await npm(third, ["ci", "--no-audit"])
  t.equal((await requireIn(third, "@larder/scoped")).stdout, "@larder/scoped@1.0.0\n")
})

t.test("a tarball that does not match its integrity is refused and not cached", async (t) => {
  const dir = project({ spoiled: "1.0.0" })
  const failure = await npm(dir, ["install", "--no-audit"]).then(() => undefined, (error) => error as { stderr: string })
  t.ok(failure !== undefined, "npm install fails")
  const path = "/repository/npm-proxy/spoiled/-/spoiled-1.0.0.tgz"
  const direct = await send(lan, path)
  t.not(direct.status === 200 && direct.complete, true, "no complete corrupt tarball from larder")
  t.ok(upstream.count("/spoiled/-/spoiled-1.0.0.tgz") >= 2, "nothing cached: asked upstream again")
})

t.test("full and abbreviated packuments are cached apart", async (t) => {
  const corgi = await send(lan, "/repository/npm-proxy/leaf", { headers: { accept: "application/vnd.npm.install-v1+json" } })
  const full = await send(lan, "/repository/npm-proxy/leaf")
  t.equal(corgi.headers["content-type"], "application/vnd.npm.install-v1+json")
  t.equal(full.headers["content-type"], "application/json")
  t.notOk("description" in JSON.parse(corgi.body.toString()).versions["2.0.0"], "abbreviated form")
  t.equal(JSON.parse(full.body.toString()).versions["2.0.0"].description, "fixture leaf", "full form")
  await send(lan, "/repository/npm-proxy/leaf")
  const asked = upstream.requests.filter((r) => r.path === "/leaf")
  t.equal(asked.filter((r) => r.headers.accept?.includes("install-v1")).length, 1, "abbreviated fetched once")
  t.equal(asked.filter((r) => !r.headers.accept?.includes("install-v1")).length, 1, "full fetched once")
  const scoped = await send(lan, "/repository/npm-proxy/@larder%2fscoped")
  t.equal(scoped.status, 200, "@scope%2fname works")
  t.equal(JSON.parse(scoped.body.toString()).name, "@larder/scoped")
})

t.test("tarball URLs follow the client's host; forwarded headers only from trusted proxies", async (t) => {
  const tarballOf = (reply: { body: Buffer }) => JSON.parse(reply.body.toString()).versions["1.0.0"].dist.tarball as string
  const byName = await send(lan, "/repository/npm-proxy/mid", { headers: { host: `localhost:${port}` } })
  t.equal(tarballOf(byName), `http://localhost:${port}/repository/npm-proxy/mid/-/mid-1.0.0.tgz`)
  const forwarded = { host: `127.0.0.1:${port}`, "x-forwarded-host": "npm.example.org", "x-forwarded-proto": "https" }
  const trusted = await send(lan, "/repository/npm-proxy/mid", { headers: forwarded, localAddress: "127.0.0.1" })
  t.equal(tarballOf(trusted), "https://npm.example.org/repository/npm-proxy/mid/-/mid-1.0.0.tgz", "trusted proxy's forwarded host and scheme")
  const untrusted = await send(lan, "/repository/npm-proxy/mid", { headers: forwarded, localAddress: "127.0.0.2" })
  t.equal(tarballOf(untrusted), `http://127.0.0.1:${port}/repository/npm-proxy/mid/-/mid-1.0.0.tgz`, "an untrusted client cannot choose the URLs")
})

t.test("what a proxy cannot do gets npm's JSON error", async (t) => {
  const audit = await send(lan, "/repository/npm-proxy/-/npm/v1/security/advisories/bulk", { method: "POST", headers: { "content-type": "application/json" } })
  t.equal(audit.status, 405)
  t.match(JSON.parse(audit.body.toString()), { error: /read-only proxy/ })
  const missing = await send(lan, "/repository/npm-proxy/no-such-package")
  t.equal(missing.status, 404)
  t.match(JSON.parse(missing.body.toString()), { error: /not found upstream/ })
})
