// Acceptance 2 of the SBOM intake: a pipeline's real curl uploads with the API key read from a
// `curl -K` config file: the project is auto-created and its components listed; a team without
// BOM_UPLOAD gets 403 naming it; an invalid BOM gets 400 with the schema's reasons and nothing is
// stored. Also the teams/permissions API, multipart uploads and `larder sbom upload`.
import t from "tap"
import { execFile } from "node:child_process"
import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { schemaErrors } from "../../src/sbom/bom.ts"
import { runAppliance, startAppliance, tempDir, type Appliance } from "../support/appliance.ts"

const run = promisify(execFile)
let larder: Appliance
let admin: string
const dir = tempDir("larder-sbom-")

const bom = (components: ReadonlyArray<Record<string, unknown>>) =>
  JSON.stringify({ bomFormat: "CycloneDX", specVersion: "1.4", version: 1, components })
const nginx = { type: "container", name: "nginx", version: "sha256:" + "a".repeat(64), purl: "pkg:oci/nginx@sha256:" + "a".repeat(64) + "?repository_url=docker.io/library/nginx&tag=1.25" }
const redis = { type: "container", name: "redis", version: "7", purl: "pkg:oci/redis?repository_url=docker.io/library/redis&tag=7" }

const api = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${larder.webUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

/** curl as a pipeline runs it: the key in a -K config file (mode 0600), not on the command line */
const curlWithKey = async (key: string, args: ReadonlyArray<string>) => {
  const config = join(dir, `curl-${Math.random().toString(36).slice(2)}.conf`)
  writeFileSync(config, `header = "X-Api-Key: ${key}"\n`, { mode: 0o600 })
  const { stdout } = await run("curl", ["-sS", "-K", config, "-w", "\n%{http_code}", ...args], { timeout: 20_000 })
  const at = stdout.lastIndexOf("\n")
  return { status: Number(stdout.slice(at + 1)), body: stdout.slice(0, at) }
}

t.before(async () => {
  larder = await startAppliance({})
  const login = await fetch(`${larder.webUrl}/api/v1/user/login`, { method: "POST", body: new URLSearchParams({ username: larder.username, password: larder.password }) })
  admin = await login.text()
})
t.teardown(() => larder?.stop())

const teamWithKey = async (name: string, granted: ReadonlyArray<string>) => {
  const team = (await api("PUT", "/api/v1/team", { name })).body
  for (const permission of granted) t.equal((await api("POST", `/api/v1/permission/${permission}/team/${team.uuid}`)).status, 200)
  const key = (await api("PUT", `/api/v1/team/${team.uuid}/key`)).body.key as string
  return { team, key }
}

t.test("curl with the key in a -K file: auto-created project, components listed", async (t) => {
  const { key } = await teamWithKey("ci", ["BOM_UPLOAD", "PROJECT_CREATION_UPLOAD", "VIEW_PORTFOLIO"])
  t.match(key, /^odt_[\w-]{20,}$/)
  const payload = join(dir, "payload.json")
  writeFileSync(payload, JSON.stringify({ projectName: "shop", projectVersion: "2026.11", autoCreate: true, bom: Buffer.from(bom([nginx, redis])).toString("base64") }))
  const put = await curlWithKey(key, ["-X", "PUT", "-H", "Content-Type: application/json", "--data", `@${payload}`, `${larder.webUrl}/api/v1/bom`])
  t.equal(put.status, 200, put.body)
  const token = JSON.parse(put.body).token
  t.match(token, /^[0-9a-f-]{36}$/)
  const processed = await curlWithKey(key, [`${larder.webUrl}/api/v1/bom/token/${token}`])
  t.same(JSON.parse(processed.body), { processing: false })
  const lookup = await curlWithKey(key, [`${larder.webUrl}/api/v1/project/lookup?name=shop&version=2026.11`])
  t.equal(lookup.status, 200)
  const project = JSON.parse(lookup.body)
  t.equal(project.name, "shop")
  t.equal(project.lastBomImportFormat, "CycloneDX 1.4")
  const components = JSON.parse((await curlWithKey(key, [`${larder.webUrl}/api/v1/component/project/${project.uuid}`])).body)
  t.same(components.map((c: { name: string; purl: string }) => [c.name, c.purl]).sort(), [[nginx.name, nginx.purl], [redis.name, redis.purl]])

  // multipart, as Dependency-Track's documentation shows it
  const file = join(dir, "bom.json")
  writeFileSync(file, bom([redis]))
  const post = await curlWithKey(key, ["-X", "POST", "-F", `project=${project.uuid}`, "-F", `bom=@${file}`, `${larder.webUrl}/api/v1/bom`])
  t.equal(post.status, 200, post.body)
  const after = JSON.parse((await curlWithKey(key, [`${larder.webUrl}/api/v1/component/project/${project.uuid}`])).body)
  t.same(after.map((c: { name: string }) => c.name), ["redis"], "a new BOM replaces the project's components")
})

t.test("without BOM_UPLOAD: 403 naming the permission; without a key: 401", async (t) => {
  const { key } = await teamWithKey("viewers", ["VIEW_PORTFOLIO"])
  const payload = join(dir, "payload-403.json")
  writeFileSync(payload, JSON.stringify({ projectName: "shop", projectVersion: "2026.11", bom: Buffer.from(bom([nginx])).toString("base64") }))
  const refused = await curlWithKey(key, ["-X", "PUT", "-H", "Content-Type: application/json", "--data", `@${payload}`, `${larder.webUrl}/api/v1/bom`])
  t.equal(refused.status, 403)
  t.match(JSON.parse(refused.body).detail, /team viewers lacks the permission BOM_UPLOAD/)
  const noKey = await fetch(`${larder.webUrl}/api/v1/bom`, { method: "PUT", body: "{}", headers: { "content-type": "application/json" } })
  t.equal(noKey.status, 401)
  const wrongKey = await curlWithKey("odt_not-a-key", [`${larder.webUrl}/api/v1/project`])
  t.equal(wrongKey.status, 401)
  const { key: uploadOnly } = await teamWithKey("upload-only", ["BOM_UPLOAD"])
  writeFileSync(payload, JSON.stringify({ projectName: "new-project", autoCreate: true, bom: Buffer.from(bom([nginx])).toString("base64") }))
  const noCreate = await curlWithKey(uploadOnly, ["-X", "PUT", "-H", "Content-Type: application/json", "--data", `@${payload}`, `${larder.webUrl}/api/v1/bom`])
  t.equal(noCreate.status, 403)
  t.match(JSON.parse(noCreate.body).detail, /PROJECT_CREATION_UPLOAD \(needed for autoCreate\)/)
})

t.test("an invalid BOM: 400 with the schema's reasons, nothing stored", async (t) => {
  const { key } = await teamWithKey("ci-2", ["BOM_UPLOAD", "PROJECT_CREATION_UPLOAD", "VIEW_PORTFOLIO"])
  const payload = join(dir, "payload-400.json")
  const invalid = bom([{ type: "box", name: "x" }, { name: "no-type" }])
  writeFileSync(payload, JSON.stringify({ projectName: "broken", projectVersion: "1", autoCreate: true, bom: Buffer.from(invalid).toString("base64") }))
  const answer = await curlWithKey(key, ["-X", "PUT", "-H", "Content-Type: application/json", "--data", `@${payload}`, `${larder.webUrl}/api/v1/bom`])
  t.equal(answer.status, 400)
  const problem = JSON.parse(answer.body)
  t.equal(problem.title, "The uploaded BOM is invalid")
  t.equal(problem.detail, "Schema validation failed")
  t.ok(problem.errors.some((error: string) => error.startsWith("$.components[0].type: must be equal to one of the allowed values")), problem.errors.join("; "))
  t.ok(problem.errors.some((error: string) => error.startsWith("$.components[1]")), "every invalid component is named")
  const lookup = await curlWithKey(key, [`${larder.webUrl}/api/v1/project/lookup?name=broken&version=1`])
  t.equal(lookup.status, 404, "the project was not created")
  for (const [label, text, detail] of [
    ["not JSON", "{nope", /not JSON/],
    ["XML", "<bom/>", /XML BOMs are not accepted/],
    ["an unknown spec version", JSON.stringify({ bomFormat: "CycloneDX", specVersion: "2.0", version: 1 }), /specVersion "2.0" is not accepted/]
  ] as const) {
    writeFileSync(payload, JSON.stringify({ projectName: "broken", autoCreate: true, bom: Buffer.from(text).toString("base64") }))
    const refused = await curlWithKey(key, ["-X", "PUT", "-H", "Content-Type: application/json", "--data", `@${payload}`, `${larder.webUrl}/api/v1/bom`])
    t.equal(refused.status, 400, label)
    t.match(JSON.parse(refused.body).detail, detail, label)
  }
  t.equal((await curlWithKey(key, [`${larder.webUrl}/api/v1/project?name=broken`])).body, "[]", "still no project")
  const spec15 = bom([redis]).replace('"1.4"', '"1.5"')
  writeFileSync(payload, JSON.stringify({ projectName: "newer", autoCreate: true, bom: Buffer.from(spec15).toString("base64") }))
  t.equal((await curlWithKey(key, ["-X", "PUT", "-H", "Content-Type: application/json", "--data", `@${payload}`, `${larder.webUrl}/api/v1/bom`])).status, 200, "CycloneDX 1.5 is accepted too")
})

t.test("password sign-in: failures are refused alike, then the name is paused; other names are not", async (t) => {
  const signIn = (username: string, password: string) =>
    fetch(`${larder.webUrl}/api/v1/user/login`, { method: "POST", body: new URLSearchParams({ username, password }) })
  const wrong = await signIn(larder.username, "not-the-password")
  t.equal(wrong.status, 401)
  t.match(await wrong.json(), { detail: "invalid username or password" })
  for (let attempt = 1; attempt <= 5; attempt++) t.equal((await signIn("intruder", `guess-${attempt}`)).status, 401, `unknown name, failure ${attempt}`)
  const paused = await signIn("intruder", "guess-6")
  t.equal(paused.status, 429)
  t.equal(paused.headers.get("content-type"), "application/problem+json")
  t.match(await paused.json(), { status: 429, detail: /too many failed sign-ins for this username; try again in 30 seconds/ })
  t.ok(Number(paused.headers.get("retry-after")) > 0, `Retry-After ${paused.headers.get("retry-after")}`)
  const admin = await signIn(larder.username, larder.password)
  t.equal(admin.status, 200, "another name signs in as usual")
})

t.test("teams, memberships, OIDC groups and mappings", async (t) => {
  const team = (await api("PUT", "/api/v1/team", { name: "platform" })).body
  t.equal((await api("PUT", "/api/v1/team", { name: "platform" })).status, 409)
  t.equal((await api("POST", `/api/v1/permission/NOT_A_PERMISSION/team/${team.uuid}`)).status, 404)
  const self = (await api("GET", "/api/v1/user/self")).body
  t.equal(self.username, larder.username)
  t.ok(self.teams.some((t: { name: string }) => t.name === "Administrators"), "the larder admin is a managed user in Administrators")
  const joined = await api("POST", `/api/v1/user/${larder.username}/membership`, { uuid: team.uuid })
  t.equal(joined.status, 200)
  t.ok(joined.body.teams.some((t: { name: string }) => t.name === "platform"))
  t.equal((await api("DELETE", `/api/v1/user/${larder.username}/membership`, { uuid: team.uuid })).status, 200)
  const group = (await api("PUT", "/api/v1/oidc/group", { name: "/platform/oncall" })).body
  t.equal(group.name, "/platform/oncall")
  const mapping = await api("PUT", "/api/v1/oidc/mapping", { team: team.uuid, group: group.uuid })
  t.equal(mapping.status, 201)
  const listed = (await api("GET", "/api/v1/team")).body.find((t: { name: string }) => t.name === "platform")
  t.same(listed.mappedOidcGroups.map((m: { group: { name: string } }) => m.group.name), ["/platform/oncall"])
  t.ok(listed.apiKeys.every((k: { maskedKey: string }) => k.maskedKey.endsWith("*")), "keys are never shown again")
  t.equal((await api("DELETE", "/api/v1/team", { uuid: team.uuid })).status, 204)
  const { key } = await teamWithKey("no-access", ["BOM_UPLOAD"])
  const refused = await curlWithKey(key, [`${larder.webUrl}/api/v1/team`])
  t.equal(refused.status, 403)
  t.match(JSON.parse(refused.body).detail, /lacks the permission ACCESS_MANAGEMENT/)
})

t.test("larder sbom upload: the key from a config file (mode 0600 enforced), --wait", async (t) => {
  const { key } = await teamWithKey("cli", ["BOM_UPLOAD", "PROJECT_CREATION_UPLOAD"])
  const config = join(dir, "upload.yaml")
  writeFileSync(config, `url: ${larder.webUrl}\napiKey: ${key}\nprojectName: cli-project\nprojectVersion: "3"\n`)
  chmodSync(config, 0o644)
  const file = join(dir, "cli-bom.json")
  writeFileSync(file, bom([nginx]))
  const result = await runAppliance(["sbom", "upload", "--config", config, "--bom", file, "--wait"])
  t.equal(result.code, 0, result.output)
  t.match(result.stdout, /^token [0-9a-f-]{36}\nprocessed: cli-project 3\n$/)
  t.match(result.stderr, /was readable by others \(mode 0644\); it holds an API key, so its mode is now 0600/)
  t.equal(statSync(config).mode & 0o777, 0o600)
  t.notOk(result.output.includes(key), "the key is never printed")
  const project = await api("GET", "/api/v1/project/lookup?name=cli-project&version=3")
  t.equal(project.status, 200)
  const refused = await runAppliance(["sbom", "upload", "--config", config], {}, bom([{ type: "box", name: "x" }]))
  t.equal(refused.code, 1)
  t.match(refused.stderr, /refused the BOM \(400\): Schema validation failed\n {2}\$\.components\[0\]\.type/)
})

t.test("larder sbom generate: manifests in, a valid CycloneDX 1.4 SBOM out, then uploaded", async (t) => {
  const manifests = join(dir, "manifests")
  mkdirSync(join(manifests, "nested"), { recursive: true })
  writeFileSync(join(manifests, "web.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: shop }
spec:
  template:
    spec:
      initContainers: [{ name: migrate, image: "registry.local:5000/shop/migrate:2" }]
      containers: [{ name: app, image: "nginx:1.25" }]
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: shop }
`)
  writeFileSync(join(manifests, "nested", "jobs.json"), JSON.stringify({
    kind: "List",
    items: [{ kind: "CronJob", metadata: { name: "backup", namespace: "ops" }, spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: "b", image: "nginx:1.25" }] } } } } } }]
  }))
  writeFileSync(join(manifests, "notes.txt"), "not a manifest")
  const generated = await runAppliance(["sbom", "generate", manifests, "--name", "shop", "--version", "7"])
  t.equal(generated.code, 0, generated.stderr)
  t.match(generated.stderr, /^2 distinct images from 2 workloads; 1 other objects skipped\n$/)
  const sbom = JSON.parse(generated.stdout)
  t.equal(sbom.specVersion, "1.4")
  t.same(sbom.components.map((c: { name: string }) => c.name).sort(), ["migrate", "nginx"], "one component per distinct image")
  t.same(schemaErrors(generated.stdout, "1.4"), [], "valid against the 1.4 schema")
  const again = await runAppliance(["sbom", "generate", manifests, "--name", "shop", "--version", "7"])
  t.equal(again.stdout, generated.stdout, "deterministic")

  const { key } = await teamWithKey("gitops", ["BOM_UPLOAD", "PROJECT_CREATION_UPLOAD"])
  const config = join(dir, "gitops.yaml")
  writeFileSync(config, `url: ${larder.webUrl}\napiKey: ${key}\nprojectName: shop\nprojectVersion: "7"\n`, { mode: 0o600 })
  const uploaded = await runAppliance(["sbom", "upload", "--config", config], {}, generated.stdout)
  t.equal(uploaded.code, 0, uploaded.output)
  t.equal(uploaded.stderr, "", "no warning for a 0600 config file")
  const project = (await api("GET", "/api/v1/project/lookup?name=shop&version=7")).body
  const components = (await api("GET", `/api/v1/component/project/${project.uuid}`)).body
  t.same(components.map((c: { name: string }) => c.name).sort(), ["migrate", "nginx"])
})
