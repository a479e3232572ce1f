// `larder client-config` and `larder repos list` as a user runs them, against the real appliance and
// real clients: the generated larder.sources used by the real apt-get (private state dirs) after
// --apply on a private root, and --revert leaving that root byte-identical; the generated cargo
// config.toml used by the real cargo fetch; helm refused while its proxies are missing or offline
// and written once they exist; the repositories table with hit ratios from the metrics.
import { execFile } from "node:child_process"
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import t from "tap"
import { snapshotTree } from "../support/files.ts"
import { parse as parseYaml } from "yaml"
import { buildArchive, makeSigningKey, serveArchive } from "../support/aptArchive.ts"
import { makeAptClient } from "../support/aptClient.ts"
import { nodeBinary, nodeFlags, startAppliance, tempDir } from "../support/appliance.ts"
import { runCargo, serveRegistry } from "../support/cargoRegistry.ts"
import { metricValue, send } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const exec = promisify(execFile)
const main = new URL("../../appliance/main.ts", import.meta.url).pathname
const scratch = tempDir("larder-client-config-")

const key = await makeSigningKey(scratch)
const distro = await buildArchive(key, [{ name: "hello-larder", version: "1.0" }], "stable")
const security = await buildArchive(key, [{ name: "lib-larder", version: "1.1" }], "stable-security")
const upstream = await startUpstream()
serveArchive(upstream, "/debian", distro)
serveArchive(upstream, "/debian-security", security)
upstream.routes.set("/charts/index.yaml", { body: "apiVersion: v1\nentries: {}\ngenerated: \"2026-11-01T00:00:00Z\"\n" })
const index = await startUpstream()
const downloads = await startUpstream()
await serveRegistry(index, "/index", downloads, [{ name: "gamma", version: "0.3.0", lib: "pub fn gamma() -> u32 { 3 }\n" }])

const appliance = await startAppliance({
  repositories: [
    { name: "apt-distro", format: "apt", proxy: { remoteUrl: upstream.url + "/debian/" } },
    { name: "apt-distro-security", format: "apt", proxy: { remoteUrl: upstream.url + "/debian-security/" } },
    { name: "cargo-proxy", format: "cargo", proxy: { remoteUrl: index.url + "/index/" } }
  ]
})
t.teardown(async () => {
  await appliance.stop()
  await Promise.all([upstream.close(), index.close(), downloads.close()])
  rmSync(scratch, { recursive: true, force: true })
})
const lanHost = new URL(appliance.lanUrl).host
writeFileSync(join(scratch, "password"), appliance.password + "\n")

const larder = (args: Array<string>, env: Record<string, string> = {}) =>
  exec(nodeBinary, [...nodeFlags, main, ...args], { timeout: 60_000, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } })
const failureOf = (promise: Promise<unknown>) =>
  promise.then(() => undefined, (error) => error as { code: number; stdout: string; stderr: string })
const rest = (method: string, path: string, body?: unknown) =>
  send(appliance.webUrl, `/service/rest/v1/repositories${path}`, {
    method,
    headers: { authorization: appliance.auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const snapshot = snapshotTree

t.test("apt: --apply on a private root, the real apt-get update and download through larder, --revert byte-identical", async (t) => {
  const root = join(scratch, "host")
  mkdirSync(join(root, "etc/apt/sources.list.d"), { recursive: true })
  writeFileSync(join(root, "etc/apt/sources.list"), "# the archives are in sources.list.d\n")
  writeFileSync(join(root, "etc/apt/sources.list.d/debian.sources"), [
    "Types: deb",
    `URIs: ${upstream.url}/debian`,
    "Suites: stable",
    "Components: main",
    `Signed-By: ${key.keyring}`,
    "",
    "Types: deb",
    `URIs: ${upstream.url}/debian-security`,
    "Suites: stable-security",
    "Components: main",
    `Signed-By: ${key.keyring}`,
    ""
  ].join("\n"))
  writeFileSync(join(root, "etc/apt/sources.list.d/old.list.disabled-by-admin"), "deb http://127.0.0.9/old x main\n", { mode: 0o600 })
  const start = snapshot(root)

  const applied = await larder(["client-config", "apt", "--apply", "--root", root, "--lan-host", lanHost])
  t.match(applied.stdout, /wrote .*larder\.sources\nrenamed .*debian\.sources to debian\.sources\.disabled\n/)
  const again = await larder(["client-config", "apt", "--apply", "--root", root, "--lan-host", lanHost])
  t.match(again.stdout, /^unchanged: /, "a second --apply changes nothing")
  const sources = readFileSync(join(root, "etc/apt/sources.list.d/larder.sources"), "utf8")
  t.match(sources, `URIs: http://${lanHost}/repository/apt-distro/\nSuites: stable\nComponents: main\nSigned-By: ${key.keyring}`)
  t.match(sources, `URIs: http://${lanHost}/repository/apt-distro-security/\nSuites: stable-security`)

  // the real apt-get reads the applied root's sources; its state and caches are private too
  const client = makeAptClient(join(scratch, "apt"), [])
  const fromRoot = [`Dir::Etc::SourceList=${root}/etc/apt/sources.list`, `Dir::Etc::SourceParts=${root}/etc/apt/sources.list.d`]
  const update = await client.aptGet(["update"], fromRoot)
  t.notMatch(update.stdout + update.stderr, /^(Err|W:|E:)/m, "apt-get update without errors or warnings")
  t.match(update.stdout, new RegExp(`http://${lanHost}/repository/apt-distro stable InRelease`))
  t.match(update.stdout, new RegExp(`http://${lanHost}/repository/apt-distro-security stable-security InRelease`))
  await client.aptGet(["download", "hello-larder", "lib-larder"], fromRoot)
  t.same(readFileSync(join(client.work, "hello-larder_1.0_all.deb")), distro.debs.get("hello-larder"), "the package from apt-distro")
  t.same(readFileSync(join(client.work, "lib-larder_1.1_all.deb")), security.debs.get("lib-larder"), "the package from apt-distro-security")
  t.ok(upstream.requests.some((r) => r.path === "/debian/pool/main/h/hello-larder/hello-larder_1.0_all.deb"), "larder fetched it upstream")
  t.ok(upstream.requests.every((r) => r.headers["user-agent"] === "larder"), "every upstream request came from larder, none from apt-get")

  const reverted = await larder(["client-config", "apt", "--revert", "--root", root])
  t.match(reverted.stdout, /renamed .*debian\.sources\.disabled back\nremoved .*larder\.sources/)
  t.same(snapshot(root), start, "apply then revert leaves the root byte-identical")
})

t.test("cargo: the generated config.toml drives the real cargo fetch through cargo-proxy", async (t) => {
  const home = join(scratch, "cargo-home")
  const written = await larder(["client-config", "cargo", "--lan-host", lanHost, "--out", home])
  t.match(written.stdout, `wrote ${join(home, "config.toml")}`)
  const project = join(scratch, "app")
  mkdirSync(join(project, "src"), { recursive: true })
  writeFileSync(join(project, "Cargo.toml"), `[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\ngamma = "0.3"\n`)
  writeFileSync(join(project, "src", "main.rs"), `fn main() { println!("{}", gamma::gamma()); }\n`)
  const cargo = (args: Array<string>) => runCargo(args, { project, home, scratch })
  await cargo(["generate-lockfile"])
  t.match(readFileSync(join(project, "Cargo.lock"), "utf8"), /name = "gamma"\nversion = "0.3.0"\nsource = "registry\+https:\/\/github.com\/rust-lang\/crates.io-index"/, "resolved as crates-io, replaced by larder")
  await cargo(["fetch"])
  t.equal(downloads.requests.filter((r) => r.path.endsWith("/download")).length, 1, "the crate came through larder")
  t.ok(index.requests.every((r) => r.headers["user-agent"] === "larder"), "cargo never reached the index itself")
  const { stdout } = await cargo(["run", "--offline", "-q"])
  t.equal(stdout, "3\n", "the project builds from what was fetched")
})

t.test("helm: refused while the proxies are missing or offline, written once they exist", async (t) => {
  const env = { LARDER_PASSWORD: appliance.password }
  for (const name of ["helm-stable", "helm-vendor"]) t.equal((await rest("DELETE", `/${name}`)).status, 204, `${name} removed`)
  const out = join(scratch, "helm")
  const refused = await failureOf(larder(["client-config", "helm", "--lan-host", lanHost, "--out", out], env))
  t.equal(refused?.code, 1)
  t.match(refused?.stderr, /refusing to write helm sources: helm-stable does not exist; helm-vendor does not exist\. Switching a chart source to a proxy that does not exist yet fails every dependent release at once/)
  t.throws(() => readdirSync(out), "nothing written")

  const helm = (name: string, online: boolean) => ({ name, online, proxy: { remoteUrl: upstream.url + "/charts/" } })
  t.equal((await rest("POST", "/helm/proxy", helm("helm-stable", true))).status, 201)
  t.equal((await rest("POST", "/helm/proxy", helm("helm-vendor", false))).status, 201)
  const offline = await failureOf(larder(["client-config", "helm", "--lan-host", lanHost, "--out", out], env))
  t.match(offline?.stderr, /refusing to write helm sources: helm-vendor is offline\./)

  t.equal((await rest("PUT", "/helm/proxy/helm-vendor", helm("helm-vendor", true))).status, 204)
  const noPassword = await failureOf(larder(["client-config", "helm", "--lan-host", lanHost]))
  t.match(noPassword?.stderr, /no password: pass --password-file FILE or set LARDER_PASSWORD/)
  const written = await larder(["client-config", "helm", "--lan-host", lanHost, "--out", out, "--password-file", join(scratch, "password")])
  t.match(written.stdout, /wrote .*repositories\.yaml/)
  const config = parseYaml(readFileSync(join(out, "repositories.yaml"), "utf8"))
  t.same(config.repositories.map((entry: { name: string }) => entry.name), ["helm-stable", "helm-vendor"])
  for (const entry of config.repositories as Array<{ url: string }>) {
    const reply = await send(appliance.lanUrl, new URL("index.yaml", entry.url).pathname)
    t.equal(reply.status, 200, `${entry.url}index.yaml serves through larder`)
  }
  t.match(readFileSync(join(out, "helmrepositories.yaml"), "utf8"), /kind: HelmRepository/)
})

t.test("repos list: every repository with its online state and hit ratio from the metrics", async (t) => {
  await send(appliance.lanUrl, "/repository/helm-stable/index.yaml")
  const { stdout } = await larder(["repos", "list", "--url", appliance.lanUrl, "--password-file", join(scratch, "password")])
  const lines = stdout.trim().split("\n")
  t.match(lines[0], /^NAME\s+FORMAT\s+ONLINE\s+REQUESTS\s+HIT RATIO\s+UPSTREAM$/)
  const row = (name: string) => lines.find((line) => line.startsWith(name + " "))?.split(/\s{2,}/)
  const metrics = (await send(appliance.webUrl, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString()
  const count = (name: string, result: string) => metricValue(metrics, "larder_cache_requests_total", { repository: name, result })
  for (const name of ["apt-distro", "helm-stable"]) {
    const served = ["hit", "miss", "coalesced", "negative", "stale"].reduce((sum, result) => sum + count(name, result), 0)
    const saved = served - count(name, "miss")
    t.ok(served > 0, `${name} has traffic`)
    t.same(row(name)?.slice(1, 5), [name === "apt-distro" ? "apt" : "helm", "online", String(served), `${((saved / served) * 100).toFixed(1)}%`], `${name}: ${row(name)?.join(" | ")}`)
  }
  t.same(row("npm-proxy")?.slice(1, 5), ["npm", "online", "0", "–"], "no traffic yet")
  t.equal(lines.length, 1 + 13, "header and the 13 repositories (helm ones recreated)")
  const wrong = await failureOf(larder(["repos", "list", "--url", appliance.lanUrl], { LARDER_PASSWORD: "wrong" }))
  t.match(wrong?.stderr, /refused the credentials of "admin" \(401\)/)
})

t.test("k3s and containerd: refused without --lan-host or with a scheme, explained", async (t) => {
  const missing = await failureOf(larder(["client-config", "k3s"]))
  t.match(missing?.stderr, /--lan-host HOST:PORT is required/)
  const scheme = await failureOf(larder(["client-config", "containerd", "--lan-host", `http://${lanHost}`]))
  t.match(scheme?.stderr, /without a scheme/)
  const noV2 = await failureOf(larder(["client-config", "k3s", "--lan-host", lanHost, "--endpoint-template", "http://{lan_host}/repository/{repository}/"]))
  t.match(noV2?.stderr, /does not end in \/v2.*400 "Not a docker request"/)
  const k3s = await larder(["client-config", "k3s", "--lan-host", lanHost])
  t.same(parseYaml(k3s.stdout).mirrors["docker.io"], { endpoint: [`http://${lanHost}/repository/docker-public/v2`] })
})
