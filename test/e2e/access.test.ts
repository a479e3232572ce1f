// Acceptance 6, 7 and 8 of the foundation: source ranges on the LAN listener, basic auth on
// metrics, and start-up refusing bad secrets and bad configuration with named errors.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import t from "tap"
import { runAppliance, startAppliance, tempDir } from "../support/appliance.ts"
import { metricValue, send } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const upstream = await startUpstream()
t.teardown(() => upstream.close())
upstream.routes.set("/hello.txt", { body: "hello\n" })
const repositories = [{ name: "raw-codehost", format: "raw", proxy: { remoteUrl: upstream.url + "/" } }]

t.test("source ranges: 127.0.0.1/32 admits 127.0.0.1 and refuses 127.0.0.2", async (t) => {
  const appliance = await startAppliance({ repositories, args: ["--lan-source-ranges", "127.0.0.1/32"] })
  t.teardown(() => appliance.stop())
  const refused = await send(appliance.lanUrl, "/repository/raw-codehost/hello.txt", { localAddress: "127.0.0.2" })
  t.equal(refused.status, 403, "127.0.0.2 is outside the range")
  t.match(refused.body.toString(), /127\.0\.0\.2 is outside/)
  t.equal(upstream.count("/hello.txt"), 0, "a refused request never reaches the upstream")
  const admitted = await send(appliance.lanUrl, "/repository/raw-codehost/hello.txt", { localAddress: "127.0.0.1" })
  t.equal(admitted.status, 200)
  t.equal(admitted.body.toString(), "hello\n")
  const metricsRefused = await send(appliance.lanUrl, "/service/rest/metrics/prometheus", {
    localAddress: "127.0.0.2",
    headers: { authorization: appliance.auth }
  })
  t.equal(metricsRefused.status, 403, "source ranges apply to everything on the LAN listener")
  const web = await send(appliance.webUrl, "/service/rest/metrics/prometheus", { localAddress: "127.0.0.2", headers: { authorization: appliance.auth } })
  t.equal(web.status, 200, "the web listener has no source ranges")
  t.equal(metricValue(web.body.toString(), "larder_source_rejected_total", { listener: "lan" }), 2, "rejections counted")
})

t.test("metrics need the admin credentials", async (t) => {
  const appliance = await startAppliance({ repositories, username: "scraper", password: "s3cret" })
  t.teardown(() => appliance.stop())
  const path = "/service/rest/metrics/prometheus"
  const anonymous = await send(appliance.lanUrl, path)
  t.equal(anonymous.status, 401)
  t.match(anonymous.headers["www-authenticate"], /^Basic/)
  const wrong = await send(appliance.lanUrl, path, { headers: { authorization: "Basic " + Buffer.from("scraper:nope").toString("base64") } })
  t.equal(wrong.status, 401)
  t.match(wrong.headers["www-authenticate"], /^Basic/)
  await send(appliance.lanUrl, "/repository/raw-codehost/hello.txt")
  await send(appliance.lanUrl, "/repository/raw-codehost/hello.txt")
  await send(appliance.lanUrl, "/repository/raw-codehost/hello.txt", { method: "HEAD" })
  const right = await send(appliance.lanUrl, path, { headers: { authorization: appliance.auth } })
  t.equal(right.status, 200)
  const text = right.body.toString()
  t.equal(metricValue(text, "larder_cache_requests_total", { repository: "raw-codehost", result: "miss" }), 1)
  t.equal(metricValue(text, "larder_cache_requests_total", { repository: "raw-codehost", result: "hit" }), 2)
  t.equal(metricValue(text, "larder_http_requests_total", { listener: "lan", repository: "raw-codehost", method: "GET", status: "200" }), 2)
  t.equal(metricValue(text, "larder_http_requests_total", { listener: "lan", repository: "raw-codehost", method: "HEAD", status: "200" }), 1)
  t.equal(metricValue(text, "larder_upstream_bytes_total", { repository: "raw-codehost" }), 6)
})

t.test("credentials from a secret directory with files username and password", async (t) => {
  const secrets = tempDir()
  writeFileSync(join(secrets, "username"), "metrics\n")
  writeFileSync(join(secrets, "password"), "from-a-file\n")
  const appliance = await startAppliance({ repositories, args: ["--admin-secret-dir", secrets], env: { LARDER_ADMIN_USERNAME: "", LARDER_ADMIN_PASSWORD: "" } })
  t.teardown(() => appliance.stop())
  const auth = "Basic " + Buffer.from("metrics:from-a-file").toString("base64")
  t.equal((await send(appliance.lanUrl, "/service/rest/metrics/prometheus", { headers: { authorization: auth } })).status, 200)
})

t.test("a secret directory with other key names stops start-up, naming expected and found files", async (t) => {
  const secrets = tempDir()
  writeFileSync(join(secrets, "user"), "admin")
  writeFileSync(join(secrets, "pass"), "secret")
  const { code, output } = await runAppliance(["--data-dir", tempDir(), "--lan-port", "0", "--web-port", "0", "--admin-secret-dir", secrets])
  t.not(code, 0, "start-up failed")
  t.match(output, /must hold files "username" and "password"; found: "pass", "user"/)
})

t.test("with no credentials configured, a password is generated once", async (t) => {
  const dataDir = tempDir()
  const env = { LARDER_ADMIN_USERNAME: "", LARDER_ADMIN_PASSWORD: "" }
  const first = await startAppliance({ dataDir, repositories, env })
  await first.stop()
  const match = /generated admin password for user "admin": (\S+)/.exec(first.output())
  t.ok(match, "the password is logged once")
  const second = await startAppliance({ dataDir, repositories, env })
  t.teardown(() => second.stop())
  t.notMatch(second.output(), /generated admin password/, "not generated again")
  const auth = "Basic " + Buffer.from(`admin:${match![1]}`).toString("base64")
  t.equal((await send(second.lanUrl, "/service/rest/metrics/prometheus", { headers: { authorization: auth } })).status, 200)
})

t.test("a bad repositories file stops start-up naming the file, the field and the expectation", async (t) => {
  const dir = tempDir()
  const file = join(dir, "repos.yaml")
  writeFileSync(file, "- name: raw-codehost\n  format: raw\n  proxy:\n    remoteUrl: 42\n  negativeCache:\n    timeToLive: soon\n")
  const { code, output } = await runAppliance(["--data-dir", tempDir(), "--lan-port", "0", "--web-port", "0", "--repositories", file])
  t.not(code, 0)
  t.match(output, file, "names the file")
  t.match(output, /Expected string\s+at \[0\]\["proxy"\]\["remoteUrl"\]/, "names the field and what was expected")
  t.match(output, /Expected number\s+at \[0\]\["negativeCache"\]\["timeToLive"\]/)
  mkdirSync(join(dir, "sub"))
  const unreadable = await runAppliance(["--data-dir", tempDir(), "--lan-port", "0", "--web-port", "0", "--repositories", join(dir, "missing.yaml")])
  t.not(unreadable.code, 0)
  t.match(unreadable.output, /missing\.yaml: cannot read repositories/)
  const ranges = await runAppliance(["--data-dir", tempDir(), "--lan-port", "0", "--web-port", "0", "--lan-source-ranges", "10.0.0.0/33"])
  t.not(ranges.code, 0)
  t.match(ranges.output, /invalid source range "10\.0\.0\.0\/33"/)
})
