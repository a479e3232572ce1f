// Cargo acceptance: the real cargo, with crates-io replaced by larder's cargo-proxy (sparse),
// resolves and fetches a project's dependencies from a local sparse-registry fixture whose crates
// download from a second host; a second empty CARGO_HOME is filled from larder alone; a crate
// that does not match its cksum is refused and not cached; index files are revalidated.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import t from "tap"
import { startAppliance, tempDir } from "../support/appliance.ts"
import { runCargo, serveRegistry } from "../support/cargoRegistry.ts"
import { send, sha256 } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"


const index = await startUpstream()
const downloads = await startUpstream()
const appliance = await startAppliance({
  repositories: [
    // index files older than 0.6 s are revalidated
    { name: "cargo-proxy", format: "cargo", proxy: { remoteUrl: index.url + "/index/", metadataMaxAge: 0.01 } }
  ]
})
const scratch = tempDir("larder-cargo-")
t.teardown(async () => {
  await appliance.stop()
  await Promise.all([index.close(), downloads.close()])
  rmSync(scratch, { recursive: true, force: true })
})

const archives = await serveRegistry(index, "/index", downloads, [
  { name: "beta", version: "0.1.0", lib: "pub fn beta() -> u32 { 2 }\n" },
  { name: "beta", version: "0.1.1", lib: "pub fn beta() -> u32 { 3 }\n" },
  { name: "alpha", version: "1.0.0", deps: { beta: "0.1" }, lib: "pub fn alpha() -> u32 { beta::beta() * 10 }\n" },
  { name: "xy", version: "0.2.0", lib: "pub fn xy() -> u32 { 7 }\n" },
  { name: "spoiled", version: "1.0.0" }
], ["spoiled"])

const project = join(scratch, "app")
mkdirSync(join(project, "src"), { recursive: true })
writeFileSync(join(project, "Cargo.toml"), `[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nalpha = "1"\nxy = "0.2"\n`)
writeFileSync(join(project, "src", "main.rs"), `fn main() { println!("{}", alpha::alpha() + xy::xy()); }\n`)

const cargoHome = (name: string) => {
  const home = join(scratch, name)
  mkdirSync(home, { recursive: true })
  // cargo reads its source replacement from a file, not from the environment
  writeFileSync(join(home, "config.toml"), [
    "[source.crates-io]",
    'replace-with = "larder"',
    "[source.larder]",
    `registry = "sparse+${appliance.lanUrl}/repository/cargo-proxy/"`,
    "[net]",
    "retry = 0",
    ""
  ].join("\n"))
  return home
}
const cargo = (args: Array<string>, home: string) => runCargo(args, { project, home, scratch })
const crateDownloads = () => downloads.requests.filter((r) => r.path.endsWith("/download")).length

t.test("cargo generate-lockfile + fetch through cargo-proxy", async (t) => {
  const home = cargoHome("cargo-home-1")
  await cargo(["generate-lockfile"], home)
  const lock = readFileSync(join(project, "Cargo.lock"), "utf8")
  t.match(lock, /name = "alpha"\nversion = "1.0.0"/, "alpha resolved")
  t.match(lock, /name = "beta"\nversion = "0.1.1"/, "its dependency resolved to the newest 0.1")
  t.match(lock, /checksum = "[0-9a-f]{64}"/)
  await cargo(["fetch"], home)
  t.equal(crateDownloads(), 3, "alpha, beta and xy downloaded once each from the download host")
  t.equal(downloads.count("/api/v1/crates/beta/0.1.0/download"), 0, "the unused version was not")
  const { stdout } = await cargo(["run", "--offline", "-q"], home)
  t.equal(stdout, "37\n", "the project builds and runs offline from what was fetched")
})

t.test("a second empty CARGO_HOME is filled from larder alone", async (t) => {
  const before = crateDownloads()
  await cargo(["fetch"], cargoHome("cargo-home-2"))
  t.equal(crateDownloads(), before, "no .crate went upstream")
})

t.test("config.json points downloads at larder", async (t) => {
  const config = await send(appliance.lanUrl, "/repository/cargo-proxy/config.json")
  t.same(JSON.parse(config.body.toString()), { dl: `${appliance.lanUrl}/repository/cargo-proxy/crates` }, "dl rewritten, api removed")
})

t.test("a crate that does not match its cksum is refused and not cached", async (t) => {
  t.equal((await send(appliance.lanUrl, "/repository/cargo-proxy/sp/oi/spoiled")).status, 200, "index read")
  const path = "/repository/cargo-proxy/crates/spoiled/1.0.0/download"
  const first = await send(appliance.lanUrl, path)
  t.not(first.status === 200 && first.complete, true, "no complete body for a corrupt crate")
  const second = await send(appliance.lanUrl, path)
  t.not(second.status === 200 && second.complete, true)
  t.equal(downloads.count("/api/v1/crates/spoiled/1.0.0/download"), 2, "nothing cached: asked upstream again")
  const unknown = await send(appliance.lanUrl, "/repository/cargo-proxy/crates/nothere/1.0.0/download")
  t.equal(unknown.status, 404)
  t.match(unknown.body.toString(), /not listed in any metadata/, "a crate no index listed is not fetched from anywhere")
})

t.test("index files are revalidated with a conditional request", async (t) => {
  const file = "/index/al/ph/alpha"
  await send(appliance.lanUrl, "/repository/cargo-proxy/al/ph/alpha")
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const again = await send(appliance.lanUrl, "/repository/cargo-proxy/al/ph/alpha")
  t.equal(again.status, 200)
  const requests = index.requests.filter((r) => r.path === file)
  t.ok(requests.length >= 2)
  t.match(requests.at(-1)?.headers["if-none-match"], /^"[0-9a-f]{16}"$/, "the revalidation carried the stored ETag")
  const missing = await send(appliance.lanUrl, "/repository/cargo-proxy/no/ne/nonexistent")
  t.equal(missing.status, 404, "a crate the registry does not have is 404 (cargo: not found)")
})
