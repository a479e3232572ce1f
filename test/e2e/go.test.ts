// Go acceptance: the real go command downloads and builds a module whose two dependencies come
// through go-proxy from a local GOPROXY fixture (one with an upper-case letter, so paths travel
// case-encoded); a second empty module cache is filled from larder alone; a missing module is the
// go command's not-found; the version list is revalidated conditionally; sumdb passes through.
import { execFile } from "node:child_process"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import t from "tap"
import { startAppliance, tempDir } from "../support/appliance.ts"
import { send } from "../support/http.ts"
import { serveModules } from "../support/goModules.ts"
import { startUpstream } from "../support/upstream.ts"

const run = promisify(execFile)

const upstream = await startUpstream()
const appliance = await startAppliance({
  repositories: [
    // metadata older than 0.6 s is revalidated; module files are immutable regardless
    { name: "go-proxy", format: "go", proxy: { remoteUrl: upstream.url + "/goproxy", metadataMaxAge: 0.01 } }
  ]
})
const scratch = tempDir("larder-go-")
t.teardown(async () => {
  await appliance.stop()
  await upstream.close()
  // the module cache is read-only on disk, as the go command leaves it
  await run("chmod", ["-R", "u+w", scratch])
  rmSync(scratch, { recursive: true, force: true })
})

await serveModules(upstream, "/goproxy", [
  { module: "example.com/util", version: "v1.0.0", files: { "go.mod": "module example.com/util\n\ngo 1.19\n", "util.go": "package util\n\nfunc Shout(s string) string { return s + \"!\" }\n" } },
  { module: "example.com/util", version: "v1.1.0", files: { "go.mod": "module example.com/util\n\ngo 1.19\n", "util.go": "package util\n\nfunc Shout(s string) string { return s + \"!!\" }\n" } },
  {
    module: "example.com/Greeter",
    version: "v0.2.0",
    files: {
      "go.mod": "module example.com/Greeter\n\ngo 1.19\n\nrequire example.com/util v1.0.0\n",
      "greeter.go": "package greeter\n\nimport \"example.com/util\"\n\nfunc Hello(name string) string { return util.Shout(\"hello \" + name) }\n"
    }
  }
])

const main = join(scratch, "app")
mkdirSync(main)
writeFileSync(join(main, "go.mod"), "module example.com/app\n\ngo 1.19\n\nrequire (\n\texample.com/Greeter v0.2.0\n\texample.com/util v1.1.0\n)\n")
writeFileSync(join(main, "main.go"), "package main\n\nimport (\n\t\"fmt\"\n\n\tgreeter \"example.com/Greeter\"\n)\n\nfunc main() { fmt.Println(greeter.Hello(\"larder\")) }\n")

const goEnv = (cache: string) => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: join(scratch, "home"),
  GOPROXY: `${appliance.lanUrl}/repository/go-proxy`,
  GOFLAGS: "-mod=mod",
  GOMODCACHE: join(scratch, cache),
  GOCACHE: join(scratch, "gocache"),
  GOPATH: join(scratch, "gopath"),
  GOSUMDB: "off",
  GOPRIVATE: "",
  GONOPROXY: "",
  GOTOOLCHAIN: "local",
  GOENV: "off",
  CGO_ENABLED: "0"
})
const go = (args: Array<string>, cache = "modcache") => run("go", args, { cwd: main, env: goEnv(cache), timeout: 120_000 })
const zipsAndMods = () => upstream.requests.filter((r) => /\.(zip|mod)$/.test(r.path)).length

t.test("go mod download and go build through go-proxy", async (t) => {
  await go(["mod", "download"])
  const built = join(scratch, "app-binary")
  await go(["build", "-o", built, "."])
  const { stdout } = await run(built)
  t.equal(stdout, "hello larder!!\n", "the binary uses Greeter v0.2.0 with util v1.1.0 (MVS picked the newer)")
  t.ok(upstream.count("/goproxy/example.com/!greeter/@v/v0.2.0.zip") === 1, "the upper-case module was asked case-encoded")
  t.ok(zipsAndMods() > 0)
})

t.test("a new empty module cache is filled from larder alone", async (t) => {
  const before = zipsAndMods()
  await go(["mod", "download"], "modcache2")
  t.equal(zipsAndMods(), before, "no .zip or .mod went upstream the second time")
})

t.test("a missing module is the go command's not found", async (t) => {
  const failure = await go(["mod", "download", "example.com/missing@v1.0.0"]).then(() => undefined, (error) => error as { stderr: string })
  t.ok(failure !== undefined, "go mod download fails")
  t.match(failure?.stderr ?? "", /404|not found/i, "and says it was not found")
  const direct = await send(appliance.lanUrl, "/repository/go-proxy/example.com/missing/@v/v1.0.0.info")
  t.equal(direct.status, 404)
  t.match(direct.body.toString(), /not found upstream of repository "go-proxy"/)
  const malformed = await send(appliance.lanUrl, "/repository/go-proxy/example.com/Greeter/@v/list")
  t.equal(malformed.status, 400, "an upper-case letter in a path is a malformed request")
  t.match(malformed.body.toString(), /upper-case letters are written as "!"/)
})

t.test("the version list is revalidated with a conditional request", async (t) => {
  const list = "/goproxy/example.com/util/@v/list"
  await go(["list", "-m", "-versions", "example.com/util"])
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const { stdout } = await go(["list", "-m", "-versions", "example.com/util"])
  t.match(stdout, /example.com\/util v1.0.0 v1.1.0/)
  const requests = upstream.requests.filter((r) => r.path === list)
  t.ok(requests.length >= 2, "the list was asked again after its max age")
  t.equal(requests.at(-1)?.headers["if-none-match"], '"l-2"', "with the stored ETag")
})

t.test("the checksum database passes through", async (t) => {
  upstream.routes.set("/goproxy/sumdb/sum.golang.org/supported", { body: "" })
  upstream.routes.set("/goproxy/sumdb/sum.golang.org/tile/8/0/000", { body: Buffer.alloc(8 * 32, 7) })
  const supported = await send(appliance.lanUrl, "/repository/go-proxy/sumdb/sum.golang.org/supported")
  t.equal(supported.status, 200, "supported: the proxy serves this checksum database")
  const tile = await send(appliance.lanUrl, "/repository/go-proxy/sumdb/sum.golang.org/tile/8/0/000")
  const again = await send(appliance.lanUrl, "/repository/go-proxy/sumdb/sum.golang.org/tile/8/0/000")
  t.equal(tile.body.length, 256)
  t.same(again.body, tile.body)
  t.equal(upstream.count("/goproxy/sumdb/sum.golang.org/tile/8/0/000"), 1, "a full tile is fetched once")
  const other = await send(appliance.lanUrl, "/repository/go-proxy/sumdb/sum.golang.org/nonsense")
  t.equal(other.status, 404)
})
