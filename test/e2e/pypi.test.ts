// PyPI acceptance: the real pip downloads and installs a wheel and an sdist through pypi-proxy,
// from a simple index whose files live on a second host (as PyPI's do); a wheel whose sha256 does
// not match the page is refused and not cached; HTML and JSON pages are negotiated and cached
// apart; project names are normalised.
import { execFile } from "node:child_process"
import { readdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import t from "tap"
import { startAppliance, tempDir } from "../support/appliance.ts"
import { send } from "../support/http.ts"
import { buildSdist, buildWheel, serveProject } from "../support/pypiIndex.ts"
import { startUpstream } from "../support/upstream.ts"

const run = promisify(execFile)

const index = await startUpstream()
const files = await startUpstream()
const appliance = await startAppliance({
  repositories: [{ name: "pypi-proxy", format: "pypi", proxy: { remoteUrl: index.url + "/" } }]
})
const scratch = tempDir("larder-pypi-")
t.teardown(async () => {
  await appliance.stop()
  await Promise.all([index.close(), files.close()])
  rmSync(scratch, { recursive: true, force: true })
})

const wheel = await buildWheel("larder_demo", "1.0.0", "from a wheel")
const sdist = await buildSdist("larder_src", "2.0.0", "from an sdist")
const spoiled = await buildWheel("spoiled", "1.0.0", "tampered")
serveProject(index, files, "larder-demo", [wheel])
serveProject(index, files, "larder-src", [sdist])
serveProject(index, files, "spoiled", [spoiled], { [spoiled.filename]: "0".repeat(64) })

const indexUrl = `${appliance.lanUrl}/repository/pypi-proxy/simple/`
let runs = 0
const pip = (args: Array<string>) =>
  run("python3", ["-m", "pip", ...args, "--index-url", indexUrl, "--cache-dir", join(scratch, `cache-${runs++}`), "--disable-pip-version-check", "--no-input"], {
    cwd: scratch,
    timeout: 120_000,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: join(scratch, "home"),
      PIP_CONFIG_FILE: "/dev/null",
      // this machine's pip looks in a local wheel folder by default: only the index may answer
      PIP_FIND_LINKS: "",
      PIP_NO_INDEX: "",
      PYTHONNOUSERSITE: "1"
    }
  })
const python = (target: string, code: string) => run("python3", ["-c", code], { env: { PATH: process.env.PATH ?? "", PYTHONPATH: target } })

t.test("pip download and install of a wheel from another host", async (t) => {
  const downloads = join(scratch, "dl-wheel")
  await pip(["download", "--no-deps", "-d", downloads, "larder-demo"])
  t.same(readdirSync(downloads), [wheel.filename], "pip download got the wheel")
  const target = join(scratch, "site-wheel")
  await pip(["install", "--no-deps", "--target", target, "Larder_Demo==1.0.0"])
  t.equal((await python(target, "import larder_demo; print(larder_demo.answer())")).stdout, "from a wheel\n", "installed and importable")
  t.equal(files.count(`/packages/larder-demo/${wheel.filename}`), 1, "the file host was asked once for two installs")
})

t.test("pip install of an sdist (built by pip)", async (t) => {
  const target = join(scratch, "site-sdist")
  await pip(["install", "--no-deps", "--no-binary", ":all:", "--target", target, "larder.src"])
  t.equal((await python(target, "import larder_src; print(larder_src.answer())")).stdout, "from an sdist\n")
  const downloads = join(scratch, "dl-sdist")
  await pip(["download", "--no-deps", "--no-binary", ":all:", "-d", downloads, "larder-src"])
  t.same(readdirSync(downloads), [sdist.filename])
  t.equal(files.count(`/packages/larder-src/${sdist.filename}`), 1, "fetched from the file host once")
})

t.test("a wheel whose sha256 does not match the page is refused and not cached", async (t) => {
  const failure = await pip(["download", "--no-deps", "-d", join(scratch, "dl-spoiled"), "spoiled"]).then(() => undefined, (error) => error as { stderr: string })
  t.ok(failure !== undefined, "pip fails")
  const path = `/repository/pypi-proxy/_upstream/127.0.0.1:${files.port}/packages/spoiled/${spoiled.filename}`
  const direct = await send(appliance.lanUrl, path)
  t.not(direct.status === 200 && direct.complete, true, "larder gives no complete body")
  t.ok(files.count(`/packages/spoiled/${spoiled.filename}`) >= 2, "nothing was cached: each request went to the file host")
})

t.test("HTML and JSON negotiated and cached apart; names normalised", async (t) => {
  const json = await send(appliance.lanUrl, "/repository/pypi-proxy/simple/LARDER_demo/", { headers: { accept: "application/vnd.pypi.simple.v1+json" } })
  t.equal(json.headers["content-type"], "application/vnd.pypi.simple.v1+json")
  const parsed = JSON.parse(json.body.toString())
  t.match(parsed.files[0].url, new RegExp(`^${appliance.lanUrl}/repository/pypi-proxy/_upstream/127\\.0\\.0\\.1:${files.port}/packages/larder-demo/`), "JSON file URL points at larder")
  t.equal(parsed.files[0].hashes.sha256, wheel.sha256)
  const html = await send(appliance.lanUrl, "/repository/pypi-proxy/simple/larder.demo", { headers: { accept: "text/html" } })
  t.match(html.headers["content-type"], /html/)
  t.match(html.body.toString(), `#sha256=${wheel.sha256}" data-requires-python="&gt;=3.7"`, "fragment and data-* kept")
  await send(appliance.lanUrl, "/repository/pypi-proxy/simple/larder-demo/", { headers: { accept: "application/vnd.pypi.simple.v1+json" } })
  await send(appliance.lanUrl, "/repository/pypi-proxy/simple/Larder-Demo/", { headers: { accept: "text/html" } })
  const asked = index.requests.filter((r) => r.path === "/simple/larder-demo/")
  t.ok(asked.every((r) => r.path === "/simple/larder-demo/"), "upstream asked with the normalised name")
  t.equal(asked.filter((r) => r.headers.accept?.startsWith("application/vnd.pypi.simple.v1+json")).length, 1, "JSON fetched once")
  t.equal(asked.filter((r) => !r.headers.accept?.startsWith("application/vnd.pypi.simple.v1+json")).length, 1, "HTML fetched once")
})
