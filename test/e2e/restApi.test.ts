// The Nexus-compatible repository REST API against the real appliance: authentication, list and
// get in Nexus's shapes without credentials, create/update/delete with Nexus's validation errors,
// changes applied live (the next request uses the new upstream), and the OpenAPI document.
import t from "tap"
import { startAppliance } from "../support/appliance.ts"
import { send } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const first = await startUpstream()
const second = await startUpstream()
const appliance = await startAppliance({
  repositories: [{
    name: "raw-codehost",
    format: "raw",
    proxy: { remoteUrl: first.url + "/", contentMaxAge: 1440 },
    httpClient: { authentication: { type: "username", username: "robot", password: "s3cret-upstream" } }
  }]
})
t.teardown(async () => {
  await appliance.stop()
  await Promise.all([first.close(), second.close()])
})
const web = appliance.webUrl
const v1 = "/service/rest/v1/repositories"
const api = (path: string, options: { method?: string; body?: unknown; auth?: string | null } = {}) =>
  send(web, path, {
    method: options.method ?? "GET",
    headers: {
      ...(options.auth === null ? {} : { authorization: options.auth ?? appliance.auth }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })

t.test("credentials are required", async (t) => {
  const anonymous = await api(v1, { auth: null })
  t.equal(anonymous.status, 401)
  t.match(anonymous.headers["www-authenticate"], /^Basic/)
  const wrong = await api(v1, { auth: "Basic " + Buffer.from("admin:wrong").toString("base64") })
  t.equal(wrong.status, 401)
})

t.test("list and get in Nexus's shapes, without the upstream password", async (t) => {
  const list = await api(v1)
  t.equal(list.status, 200)
  const entries = JSON.parse(list.body.toString())
  const raw = entries.find((entry: { name: string }) => entry.name === "raw-codehost")
  t.same(raw, { name: "raw-codehost", format: "raw", type: "proxy", url: `${web}/repository/raw-codehost`, attributes: { proxy: { remoteUrl: first.url + "/" } } })
  t.ok(entries.length >= 13, "the defaults are listed too")
  for (const path of [`${v1}/raw-codehost`, `${v1}/raw/proxy/raw-codehost`]) {
    const full = await api(path)
    t.equal(full.status, 200, path)
    const body = JSON.parse(full.body.toString())
    t.match(body, { name: "raw-codehost", online: true, proxy: { remoteUrl: first.url + "/", contentMaxAge: 1440 }, negativeCache: { enabled: true }, httpClient: { authentication: { username: "robot" } }, storage: { blobStoreName: "default" } })
    t.notMatch(full.body.toString(), /s3cret-upstream/, "the password is never returned")
  }
  const docker = JSON.parse((await api(`${v1}/docker-public`)).body.toString())
  t.match(docker, { format: "docker", docker: { v1Enabled: false, forceBasicAuth: false, httpPort: null }, dockerProxy: { indexType: "REGISTRY" } })
  t.equal((await api(`${v1}/npm/proxy/raw-codehost`)).status, 404, "wrong format in the path")
  const missing = await api(`${v1}/nope`)
  t.equal(missing.status, 404)
  t.match(JSON.parse(missing.body.toString()), { message: /"nope" does not exist/ })
})

const npmBody = (remoteUrl: string) => ({
  name: "npm-mirror",
  online: true,
  storage: { blobStoreName: "default", strictContentTypeValidation: true },
  proxy: { remoteUrl, contentMaxAge: 1440, metadataMaxAge: 30 },
  negativeCache: { enabled: true, timeToLive: 1440 },
  httpClient: { blocked: false, autoBlock: true, authentication: null }
})

t.test("create, validation errors, update applied live, delete", async (t) => {
  const created = await api(`${v1}/npm/proxy`, { method: "POST", body: npmBody(first.url + "/") })
  t.equal(created.status, 201)
  t.match(JSON.parse((await api(`${v1}/npm-mirror`)).body.toString()), { format: "npm", proxy: { metadataMaxAge: 30 } })

  const duplicate = await api(`${v1}/npm/proxy`, { method: "POST", body: npmBody(first.url + "/") })
  t.equal(duplicate.status, 400)
  t.match(JSON.parse(duplicate.body.toString()), [{ id: "PARAMETER name", message: /already exists/ }])
  const badUrl = await api(`${v1}/npm/proxy`, { method: "POST", body: { ...npmBody("ftp://x/"), name: "other" } })
  t.equal(badUrl.status, 400)
  t.match(JSON.parse(badUrl.body.toString()), [{ message: /http\(s\) URL/ }])
  const badFormat = await api(`${v1}/rubygems/proxy`, { method: "POST", body: { ...npmBody(first.url), name: "gems" } })
  t.equal(badFormat.status, 400)
  t.match(JSON.parse(badFormat.body.toString()), [{ message: /unknown format "rubygems"/ }])
  const notJson = await send(web, `${v1}/npm/proxy`, { method: "POST", headers: { authorization: appliance.auth, "content-type": "application/json" }, body: "{broken" })
  t.equal(notJson.status, 400, "malformed JSON")

  first.routes.set("/file.txt", { body: "from the first upstream\n" })
  second.routes.set("/file.txt", { body: "from the second upstream\n" })
  t.equal((await send(web, "/repository/raw-codehost/file.txt")).body.toString(), "from the first upstream\n")
  const update = await api(`${v1}/raw/proxy/raw-codehost`, {
    method: "PUT",
    body: { name: "raw-codehost", online: true, proxy: { remoteUrl: second.url + "/", contentMaxAge: 1440, metadataMaxAge: 1440 }, negativeCache: { enabled: true, timeToLive: 1 }, httpClient: { authentication: null } }
  })
  t.equal(update.status, 204)
  t.equal((await send(web, "/repository/raw-codehost/other.txt")).status, 404)
  second.routes.set("/other.txt", { body: "new upstream\n" })
  await send(web, "/repository/raw-codehost/file.txt")
  t.equal(second.count("/other.txt"), 1, "the next request after the PUT went to the new upstream, no restart")
  t.match(JSON.parse((await api(`${v1}/raw-codehost`)).body.toString()), { httpClient: { authentication: { username: "robot" } } }, "an update without credentials keeps the stored ones")
  t.equal((await api(`${v1}/raw/proxy/absent`, { method: "PUT", body: { name: "absent" } })).status, 404)

  t.equal((await api(`${v1}/npm-mirror`, { method: "DELETE" })).status, 204)
  t.equal((await api(`${v1}/npm-mirror`)).status, 404)
  t.equal((await send(web, "/repository/npm-mirror/left-pad")).status, 404, "its URLs are gone too")
  t.equal((await api(`${v1}/npm-mirror`, { method: "DELETE" })).status, 404)
})

t.test("invalidate-cache drops metadata and negative entries, keeps content", async (t) => {
  const created = await api(`${v1}/helm/proxy`, { method: "POST", body: { name: "charts", proxy: { remoteUrl: first.url + "/charts/" } } })
  t.equal(created.status, 201)
  first.routes.set("/charts/index.yaml", { body: "apiVersion: v1\nentries: {}\n" })
  first.routes.set("/charts/x-1.0.0.tgz", { body: "chart bytes" })
  for (let i = 0; i < 2; i++) {
    await send(web, "/repository/charts/index.yaml")
    await send(web, "/repository/charts/x-1.0.0.tgz")
    await send(web, "/repository/charts/missing-1.0.0.tgz")
  }
  t.same([first.count("/charts/index.yaml"), first.count("/charts/x-1.0.0.tgz"), first.count("/charts/missing-1.0.0.tgz")], [1, 1, 1], "all cached")
  t.equal((await api(`${v1}/charts/invalidate-cache`, { method: "POST" })).status, 204)
  await send(web, "/repository/charts/index.yaml")
  await send(web, "/repository/charts/x-1.0.0.tgz")
  await send(web, "/repository/charts/missing-1.0.0.tgz")
  t.same([first.count("/charts/index.yaml"), first.count("/charts/x-1.0.0.tgz"), first.count("/charts/missing-1.0.0.tgz")], [2, 1, 2], "metadata and the 404 asked again, the chart not")
  t.equal((await api(`${v1}/nope/invalidate-cache`, { method: "POST" })).status, 404)
})

t.test("OpenAPI document and unknown paths", async (t) => {
  const swagger = await api("/service/rest/swagger.json")
  t.equal(swagger.status, 200)
  const doc = JSON.parse(swagger.body.toString())
  t.ok(doc.paths["/service/rest/v1/repositories"], "lists the repository endpoints")
  const unknown = await api("/service/rest/v1/repositories/a/b/c/d")
  t.equal(unknown.status, 404)
  t.match(JSON.parse(unknown.body.toString()), { status: 404 })
})
