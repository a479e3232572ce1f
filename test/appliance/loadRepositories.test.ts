import { writeFileSync } from "node:fs"
import { join } from "node:path"
import t from "tap"
import { Effect, Exit } from "effect"
import { loadRepositories } from "../../appliance/config/loadRepositories.ts"
import { tempDir } from "../support/appliance.ts"

const specNames = [
  "docker-public", "docker-codehost", "docker-registry3", "apt-distro", "apt-distro-security", "npm-proxy",
  "pypi-proxy", "go-proxy", "cargo-proxy", "helm-stable", "helm-vendor", "infra-registry", "raw-codehost"
]

t.test("the defaults are the spec's 13 repositories, overridden by name", async (t) => {
  const file = join(tempDir(), "repos.json")
  writeFileSync(file, JSON.stringify([
    { name: "raw-codehost", format: "raw", proxy: { remoteUrl: "http://127.0.0.1:9/files/" } },
    { name: "npm-proxy", format: "npm", online: false, proxy: { remoteUrl: "http://127.0.0.1:9/npm/" } }
  ]))
  const { repositories, overridden } = await Effect.runPromise(loadRepositories(file))
  t.same(repositories.map((r) => r.name).sort(), [...specNames].sort())
  const raw = repositories.find((r) => r.name === "raw-codehost")!
  t.same(raw, {
    name: "raw-codehost",
    format: "raw",
    type: "proxy",
    online: true,
    proxy: { remoteUrl: "http://127.0.0.1:9/files/", contentMaxAge: 1440, metadataMaxAge: 1440 },
    negativeCache: { enabled: true, timeToLive: 1440 }
  }, "Nexus's defaults fill what the file leaves out")
  t.equal(repositories.find((r) => r.name === "npm-proxy")!.online, false)
  t.same([...overridden].sort(), ["npm-proxy", "raw-codehost"])
  t.equal(repositories.find((r) => r.name === "docker-public")!.format, "docker")
})

t.test("a bad file fails naming the file, each field and the expectation", async (t) => {
  const file = join(tempDir(), "repos.yaml")
  writeFileSync(file, "- name: raw-codehost\n  format: rww\n  proxy: { remoteUrl: ftp://x }\n")
  const exit = await Effect.runPromiseExit(loadRepositories(file))
  t.ok(Exit.isFailure(exit))
  const message = Exit.isFailure(exit) ? String(exit.cause) : ""
  t.match(message, file)
  t.match(message, /\[0\]\["format"\]/)
  t.match(message, /Expected an http\(s\) URL[\s\S]*\[0\]\["proxy"\]\["remoteUrl"\]/)
  const broken = join(tempDir(), "broken.yaml")
  writeFileSync(broken, "- name: [unclosed\n")
  const parse = await Effect.runPromiseExit(loadRepositories(broken))
  t.match(Exit.isFailure(parse) ? String(parse.cause) : "", /broken\.yaml: cannot read repositories/)
})
