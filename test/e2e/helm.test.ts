// Helm acceptance (no helm binary here): what `helm repo add/update/pull` does — fetch index.yaml,
// follow the rewritten chart URL, check the digest — against the real appliance and two local
// upstreams (the repository and a download host, as with charts on release pages). Also the
// issue's "upstream goes away" case: cached charts and stale metadata are still served, counted.
import { execFile } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import t from "tap"
import { parse } from "yaml"
import { startAppliance, tempDir } from "../support/appliance.ts"
import { metricValue, send, sha256 } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const run = promisify(execFile)

/** a chart archive as `helm package` makes it: <name>/Chart.yaml and a template, gzipped tar */
const packageChart = async (name: string, version: string): Promise<Buffer> => {
  const dir = tempDir("larder-chart-")
  mkdirSync(join(dir, name, "templates"), { recursive: true })
  writeFileSync(join(dir, name, "Chart.yaml"), `apiVersion: v2\nname: ${name}\nversion: ${version}\n`)
  writeFileSync(join(dir, name, "templates", "cm.yaml"), `kind: ConfigMap\nmetadata:\n  name: ${name}\n`)
  await run("tar", ["-czf", join(dir, "chart.tgz"), "-C", dir, name])
  return readFileSync(join(dir, "chart.tgz"))
}

const repo = await startUpstream()
const downloads = await startUpstream()
const vendor = await startUpstream()
const appliance = await startAppliance({
  repositories: [
    { name: "helm-stable", format: "helm", proxy: { remoteUrl: repo.url + "/stable/", metadataMaxAge: 1440 } },
    // metadata older than 0.6 s is revalidated, so the vendor test sees staleness without waiting long
    { name: "helm-vendor", format: "helm", proxy: { remoteUrl: vendor.url + "/", metadataMaxAge: 0.01 } }
  ]
})
t.teardown(async () => {
  await appliance.stop()
  await Promise.all([repo.close(), downloads.close()])
})
const lan = appliance.lanUrl
const metrics = async () =>
  (await send(lan, "/service/rest/metrics/prometheus", { headers: { authorization: appliance.auth } })).body.toString()

const web = await packageChart("web", "1.2.0")
const db = await packageChart("db", "3.0.1")
const indexYaml = (webDigest: string) => `apiVersion: v1
entries:
  web:
    - name: web
      version: 1.2.0
      digest: ${webDigest}
      urls: [charts/web-1.2.0.tgz]
  db:
    - name: db
      version: 3.0.1
      digest: ${sha256(db)}
      urls: ["${downloads.url}/releases/v3.0.1/db-3.0.1.tgz"]
`

/** helm repo update + helm pull: the index, then each chart by its (rewritten) URL, digest checked */
const pull = async (repository: string, chart: string) => {
  const index = await send(lan, `/repository/${repository}/index.yaml`)
  if (index.status !== 200) throw new Error(`index.yaml: ${index.status} ${index.body}`)
  const version = parse(index.body.toString()).entries[chart][0]
  const url = new URL(version.urls[0])
  const archive = await send(`${url.protocol}//${url.host}`, url.pathname)
  return { index, version, url, archive }
}

t.test("helm pull through helm-stable: rewritten URLs, digests checked, one upstream fetch", async (t) => {
  repo.routes.set("/stable/index.yaml", { body: indexYaml(sha256(web)), headers: { etag: '"i1"', "content-type": "text/yaml" } })
  repo.routes.set("/stable/charts/web-1.2.0.tgz", { body: web })
  downloads.routes.set("/releases/v3.0.1/db-3.0.1.tgz", { body: db })
  downloads.routes.set("/releases/v3.0.1/db-3.0.1.tgz.prov", { body: "-----BEGIN PGP SIGNED MESSAGE-----\nprovenance\n" })

  const first = await pull("helm-stable", "web")
  t.equal(first.url.href, `${lan}/repository/helm-stable/charts/web-1.2.0.tgz`, "relative chart URL now points at larder")
  t.equal(first.archive.status, 200)
  t.equal(first.archive.sha256, first.version.digest, "the archive matches the index digest")

  const other = await pull("helm-stable", "db")
  t.equal(other.url.pathname, `/repository/helm-stable/_upstream/127.0.0.1:${downloads.port}/releases/v3.0.1/db-3.0.1.tgz`, "a chart on another host is served by larder too")
  t.equal(other.archive.sha256, other.version.digest)
  const prov = await send(lan, `${other.url.pathname}.prov`)
  t.equal(prov.status, 200, "provenance file passed through")
  t.match(prov.body.toString(), /provenance/)

  await pull("helm-stable", "web")
  await pull("helm-stable", "db")
  t.equal(repo.count("/stable/index.yaml"), 1, "index fetched once inside its max age")
  t.equal(repo.count("/stable/charts/web-1.2.0.tgz"), 1, "chart fetched once")
  t.equal(downloads.count("/releases/v3.0.1/db-3.0.1.tgz"), 1, "off-host chart fetched once")

  const viaName = await send(lan, "/repository/helm-stable/index.yaml", { headers: { host: `localhost:${new URL(lan).port}` } })
  t.match(parse(viaName.body.toString()).entries.web[0].urls[0], new RegExp(`^http://localhost:${new URL(lan).port}/repository/helm-stable/`), "URLs use the host the client used")
  t.equal(repo.count("/stable/index.yaml"), 1, "another base URL is a rewrite, not a fetch")
})

t.test("a chart that does not match its digest is refused and not cached", async (t) => {
  const tampered = await packageChart("web", "1.2.0-tampered")
  vendor.routes.set("/index.yaml", { body: indexYaml(sha256(web)).replace(/db:[\s\S]*$/, ""), headers: { etag: '"v1"' } })
  vendor.routes.set("/charts/web-1.2.0.tgz", { body: tampered })
  const { archive } = await pull("helm-vendor", "web")
  t.not(archive.status === 200 && archive.complete, true, "the client does not get a complete corrupt chart")
  const again = await send(lan, "/repository/helm-vendor/charts/web-1.2.0.tgz")
  t.not(again.status === 200 && again.complete, true, "and not the second time either")
  t.equal(vendor.count("/charts/web-1.2.0.tgz"), 2, "nothing was cached: the upstream was asked again")

  vendor.routes.set("/charts/web-1.2.0.tgz", { body: web })
  const fixed = await send(lan, "/repository/helm-vendor/charts/web-1.2.0.tgz")
  t.equal(fixed.status, 200)
  t.equal(fixed.sha256, sha256(web), "the matching chart is served once the upstream has it")
})

t.test("upstream gone: cached chart and stale index still served, counted as stale", async (t) => {
  const staleBefore = metricValue(await metrics(), "larder_cache_requests_total", { repository: "helm-vendor", result: "stale" })
  await vendor.close()
  await new Promise((resolve) => setTimeout(resolve, 1000)) // past metadataMaxAge (0.6 s)
  const index = await send(lan, "/repository/helm-vendor/index.yaml")
  t.equal(index.status, 200, "stale index served")
  t.match(parse(index.body.toString()).entries.web[0].urls[0], /\/repository\/helm-vendor\/charts\/web-1\.2\.0\.tgz$/, "still rewritten")
  const chart = await send(lan, "/repository/helm-vendor/charts/web-1.2.0.tgz")
  t.equal(chart.status, 200, "cached chart served")
  t.equal(chart.sha256, sha256(web))
  const staleAfter = metricValue(await metrics(), "larder_cache_requests_total", { repository: "helm-vendor", result: "stale" })
  t.equal(staleAfter - staleBefore, 1, `${staleBefore} -> ${staleAfter}: ` + "the stale index was counted (the chart is immutable: a plain hit)")
  const missing = await send(lan, "/repository/helm-vendor/charts/never-seen-1.0.0.tgz")
  t.equal(missing.status, 502, "content never cached cannot be served while the upstream is gone")
  t.match(missing.body.toString(), /unreachable/)
})
