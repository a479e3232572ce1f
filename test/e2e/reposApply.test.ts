// `larder repos apply` against the real appliance: the 13 default repositories with changed
// upstreams plus a new one; the plan it prints; --dry-run changes nothing; --only touches one;
// a second run reports everything unchanged; errors name what is wrong.
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import t from "tap"
import { stringify } from "yaml"
import { nodeBinary, nodeFlags, startAppliance, tempDir } from "../support/appliance.ts"
import { send } from "../support/http.ts"

const run = promisify(execFile)
const main = new URL("../../appliance/main.ts", import.meta.url).pathname

const appliance = await startAppliance()
const scratch = tempDir("larder-apply-")
t.teardown(() => appliance.stop())
const passwordFile = join(scratch, "password")
writeFileSync(passwordFile, appliance.password + "\n")

const defaults = ["docker-public", "docker-codehost", "docker-registry3", "apt-distro", "apt-distro-security", "npm-proxy", "pypi-proxy", "go-proxy", "cargo-proxy", "helm-stable", "helm-vendor", "infra-registry", "raw-codehost"]
const formatOf: Record<string, string> = {
  "docker-public": "docker", "docker-codehost": "docker", "docker-registry3": "docker", "apt-distro": "apt", "apt-distro-security": "apt",
  "npm-proxy": "npm", "pypi-proxy": "pypi", "go-proxy": "go", "cargo-proxy": "cargo", "helm-stable": "helm", "helm-vendor": "helm",
  "infra-registry": "raw", "raw-codehost": "raw"
}
const desired = [
  ...defaults.map((name) => ({ name, format: formatOf[name], online: true, proxy: { remoteUrl: `http://mirror.lan/${name}/`, contentMaxAge: 1440, metadataMaxAge: 1440 } })),
  { name: "raw-extra", format: "raw", proxy: { remoteUrl: "http://files.lan/" } }
]
const file = join(scratch, "repositories.yaml")
writeFileSync(file, stringify(desired))

const apply = (args: Array<string>) =>
  run(nodeBinary, [...nodeFlags, main, "repos", "apply", file, "--url", appliance.webUrl, "--user", appliance.username, "--password-file", passwordFile, ...args], {
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? "" }
  })
const remoteUrl = async (name: string) =>
  JSON.parse((await send(appliance.webUrl, `/service/rest/v1/repositories/${name}`, { headers: { authorization: appliance.auth } })).body.toString()).proxy?.remoteUrl

t.test("--dry-run prints the plan and changes nothing", async (t) => {
  const before = await remoteUrl("npm-proxy")
  const { stdout } = await apply(["--dry-run"])
  t.match(stdout, "+ create raw-extra")
  t.match(stdout, `~ update docker-public: proxy.remoteUrl "https://registry-1.docker.io" -> "http://mirror.lan/docker-public/"`)
  t.match(stdout, /dry run, nothing changed: 1 to create, 13 to update, 0 unchanged/)
  t.equal(await remoteUrl("npm-proxy"), before, "nothing changed (checked with GET)")
  t.equal((await send(appliance.webUrl, "/service/rest/v1/repositories/raw-extra", { headers: { authorization: appliance.auth } })).status, 404)
})

t.test("--only touches one repository; an unknown name lists the valid ones", async (t) => {
  const { stdout } = await apply(["--only", "go-proxy"])
  t.equal(stdout.trim().split("\n")[0], `~ update go-proxy: proxy.remoteUrl "https://proxy.golang.org" -> "http://mirror.lan/go-proxy/"`)
  t.equal(await remoteUrl("go-proxy"), "http://mirror.lan/go-proxy/")
  t.equal(await remoteUrl("pypi-proxy"), "https://pypi.org/", "the others are untouched")
  const failure = await apply(["--only", "nope"]).then(() => undefined, (error) => error as { code: number; stderr: string })
  t.equal(failure?.code, 1)
  t.match(failure?.stderr, /--only nope: no such repository .* it has docker-public, /)
})

t.test("apply, then a second run finds everything unchanged", async (t) => {
  const first = await apply([])
  t.match(first.stdout, /1 to create, 12 to update, 1 unchanged/, "go-proxy was already done")
  t.match(first.stdout, "= unchanged go-proxy")
  t.equal(await remoteUrl("raw-extra"), "http://files.lan/")
  t.equal(await remoteUrl("helm-vendor"), "http://mirror.lan/helm-vendor/")
  const second = await apply([])
  t.match(second.stdout, /0 to create, 0 to update, 14 unchanged/)
  t.notMatch(second.stdout, /^[+~]/m, "no create or update the second time")
})

t.test("errors: bad file, wrong password, no password", async (t) => {
  writeFileSync(join(scratch, "bad.yaml"), stringify([{ name: "x", format: "rubygems" }]))
  const bad = await run(nodeBinary, [...nodeFlags, main, "repos", "apply", join(scratch, "bad.yaml"), "--url", appliance.webUrl, "--password-file", passwordFile]).then(() => undefined, (error) => error as { code: number; stderr: string })
  t.equal(bad?.code, 1)
  t.match(bad?.stderr, /bad\.yaml: invalid repository configuration/)
  writeFileSync(join(scratch, "wrong"), "wrong")
  const wrong = await run(nodeBinary, [...nodeFlags, main, "repos", "apply", file, "--url", appliance.webUrl, "--password-file", join(scratch, "wrong")]).then(() => undefined, (error) => error as { code: number; stderr: string })
  t.match(wrong?.stderr, /refused the credentials of "admin" \(401\)/)
  const none = await run(nodeBinary, [...nodeFlags, main, "repos", "apply", file, "--url", appliance.webUrl], { env: { PATH: process.env.PATH ?? "" } }).then(() => undefined, (error) => error as { code: number; stderr: string })
  t.match(none?.stderr, /no password: pass --password-file FILE or set LARDER_PASSWORD/)
})
