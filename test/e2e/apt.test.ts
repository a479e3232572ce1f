// apt acceptance: the real apt-get, with private state and cache dirs and a deb822 .sources file
// pointing at apt-distro and apt-distro-security through larder (Signed-By the fixture's key),
// updates, downloads and resolves a package whose dependency lives in the other repository; a
// second update after the metadata age sends only conditional requests upstream; a .deb that does
// not match its Packages SHA256 is refused and not cached; a flat repository works too.
import { readFileSync, readdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import t from "tap"
import { buildArchive, listFiles, makeSigningKey, serveArchive } from "../support/aptArchive.ts"
import { makeAptClient } from "../support/aptClient.ts"
import { startAppliance, tempDir } from "../support/appliance.ts"
import { send } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const scratch = tempDir("larder-apt-")
const key = await makeSigningKey(scratch)
const distro = await buildArchive(key, [
  { name: "hello-larder", version: "1.0" },
  { name: "app-larder", version: "2.0", depends: "lib-larder (>= 1.1)" },
  { name: "spoiled-larder", version: "1.0" }
], "stable")
const security = await buildArchive(key, [{ name: "lib-larder", version: "1.1" }], "stable-security")
const flat = await buildArchive(key, [{ name: "flat-larder", version: "0.1" }], undefined)

const upstream = await startUpstream()
serveArchive(upstream, "/debian", distro)
serveArchive(upstream, "/debian-security", security)
serveArchive(upstream, "/flat", flat)
const spoiledPath = "/debian/pool/main/s/spoiled-larder/spoiled-larder_1.0_all.deb"
upstream.routes.set(spoiledPath, { body: Buffer.concat([distro.debs.get("spoiled-larder")!, Buffer.from("tampered")]) })

// metadata older than 1.2 s is revalidated
const apt = (name: string, path: string) => ({ name, format: "apt", proxy: { remoteUrl: upstream.url + path, metadataMaxAge: 0.02 } })
const appliance = await startAppliance({
  repositories: [apt("apt-distro", "/debian/"), apt("apt-distro-security", "/debian-security/"), apt("apt-flat", "/flat/")]
})
const hostLists = await listFiles("/var/lib/apt/lists").catch(() => [])
t.teardown(async () => {
  await appliance.stop()
  await upstream.close()
  rmSync(scratch, { recursive: true, force: true })
})

const base = `${appliance.lanUrl}/repository`
const client = makeAptClient(join(scratch, "apt"), [
  { uri: `${base}/apt-distro/`, suite: "stable", keyring: key.keyring },
  { uri: `${base}/apt-distro-security/`, suite: "stable-security", keyring: key.keyring },
  { uri: `${base}/apt-flat/`, suite: "./", keyring: key.keyring }
])
const aptGet = (args: Array<string>) => client.aptGet(args)
const root = client.root

t.test("apt-get update, download and install --download-only through larder", async (t) => {
  const update = await aptGet(["update"])
  t.notMatch(update.stdout + update.stderr, /^(Err|W:|E:)/m, "update without errors or warnings")
  t.match(update.stdout, /apt-distro-security/)

  await aptGet(["download", "hello-larder"])
  const downloaded = readFileSync(join(root, "work", "hello-larder_1.0_all.deb"))
  t.same(downloaded, distro.debs.get("hello-larder"), "apt-get download got the package")

  await aptGet(["install", "--download-only", "-y", "app-larder"])
  const archives = readdirSync(join(root, "cache/archives")).filter((name) => name.endsWith(".deb")).sort()
  t.same(archives, ["app-larder_2.0_all.deb", "lib-larder_1.1_all.deb"], "the package and its dependency from the security repository")

  const byHash = upstream.requests.filter((r) => r.path.includes("/by-hash/SHA256/"))
  t.ok(byHash.length >= 2, "index files were fetched by hash (the Release offers it)")
  t.same(await listFiles("/var/lib/apt/lists").catch(() => []), hostLists, "the host's apt lists are untouched")
})

t.test("a second update after the metadata age sends only conditional requests upstream", async (t) => {
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const before = upstream.requests.length
  const update = await aptGet(["update"])
  t.notMatch(update.stdout + update.stderr, /^(Err|W:|E:)/m)
  const sent = upstream.requests.slice(before)
  t.ok(sent.length >= 3, "every InRelease was revalidated")
  t.ok(sent.every((r) => r.path.endsWith("/InRelease")), `only InRelease went upstream: ${sent.map((r) => r.path).join(", ")}`)
  t.ok(sent.every((r) => r.headers["if-none-match"] !== undefined || r.headers["if-modified-since"] !== undefined), "each one conditional")
})

t.test("a package that does not match its Packages SHA256 is refused and not cached", async (t) => {
  const failure = await aptGet(["download", "spoiled-larder"]).then(() => undefined, (error) => error as { stdout: string; stderr: string })
  t.ok(failure !== undefined, "apt-get download fails")
  const direct = await send(appliance.lanUrl, "/repository/apt-distro/pool/main/s/spoiled-larder/spoiled-larder_1.0_all.deb")
  t.not(direct.status === 200 && direct.complete, true, "larder gives no complete corrupt package")
  t.ok(upstream.count(spoiledPath) >= 2, "nothing was cached: each request went upstream")
})

t.test("a flat repository", async (t) => {
  await aptGet(["download", "flat-larder"])
  t.same(readFileSync(join(root, "work", "flat-larder_0.1_all.deb")), flat.debs.get("flat-larder"))
})
