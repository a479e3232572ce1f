// Acceptance 4 of the SBOM intake: an issuer whose certificate is signed by a CA larder does not
// trust. /api/v1/oidc/available still says OIDC is configured (as Dependency-Track's flag does) but
// also that discovery failed, /api/v1/oidc/status names the TLS error, and the log says how to fix
// it; with NODE_EXTRA_CA_CERTS (or --ca-file) the same discovery succeeds.
import t from "tap"
import { execFile } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:https"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { promisify } from "node:util"
import { chromium } from "playwright-core"
import { startAppliance, tempDir } from "../support/appliance.ts"

const run = promisify(execFile)
const dir = tempDir("larder-ca-")
let server: Server
let issuer: string

t.before(async () => {
  const openssl = (...args: Array<string>) => run("openssl", args, { cwd: dir, timeout: 20_000 })
  await openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=larder test CA")
  await openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
  await openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext")
  server = createServer({ key: readFileSync(join(dir, "server.key")), cert: readFileSync(join(dir, "server.pem")) }, (request, response) => {
    if (request.url === "/realms/apps/.well-known/openid-configuration") {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/certs` }))
    } else {
      response.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}/realms/apps`
})
t.teardown(() => new Promise((resolve) => server.close(resolve)))

const oidcEnv = () => ({ ALPINE_OIDC_ENABLED: "true", ALPINE_OIDC_ISSUER: issuer, ALPINE_OIDC_CLIENT_ID: "dependency-track" })

const statusAfterDiscovery = async (webUrl: string) => {
  for (let attempt = 0; attempt < 100; attempt++) {
    const status = await (await fetch(`${webUrl}/api/v1/oidc/status`)).json() as { discovery: { ok: boolean; error?: string; checkedAt?: string } }
    if (status.discovery.checkedAt !== undefined) return status
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("discovery did not run")
}

t.test("an untrusted CA: available, but discovery reports the TLS error", async (t) => {
  const larder = await startAppliance({ env: oidcEnv() })
  t.teardown(() => larder.stop())
  const status = await statusAfterDiscovery(larder.webUrl)
  t.equal(status.discovery.ok, false)
  t.match(status.discovery.error, /^TLS: .*\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\)/)
  t.match(status.discovery.error, /NODE_EXTRA_CA_CERTS=\/path\/ca\.pem or --ca-file/)
  const available = await (await fetch(`${larder.webUrl}/api/v1/oidc/available`)).json() as { available: boolean; discovery: string }
  t.equal(available.available, true, "OIDC is configured, so available reads true (as in Dependency-Track)")
  t.match(available.discovery, /^TLS: /, "but the answer also says discovery failed: the login page shows it instead of hiding the button")
  t.equal(await (await fetch(`${larder.webUrl}/api/v1/oidc/available`, { headers: { accept: "text/plain" } })).text(), "true", "Dependency-Track's plain-text answer")
  t.match(larder.output(), /SBOM OIDC: discovery of https:\/\/127\.0\.0\.1:\d+\/realms\/apps failed: TLS: /, "and the log says so at start")
  // the login page shows the failure where the button would be (Dependency-Track's button silently vanishes)
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  await page.goto(`${larder.webUrl}/sbom/`)
  const notice = page.getByRole("alert")
  await notice.waitFor()
  t.match(await notice.textContent(), /Single sign-on is configured, but the identity provider cannot be reached: TLS: /)
  t.equal(await page.locator("#oidc-login").count(), 0, "no SSO button that cannot work")
  const login = await fetch(`${larder.webUrl}/api/v1/user/oidc/login`, { method: "POST", headers: { authorization: "Bearer x.y.z" } })
  t.equal(login.status, 401)
  t.match(((await login.json()) as { detail: string }).detail, /OIDC is unavailable: TLS: /)
})

t.test("with NODE_EXTRA_CA_CERTS, discovery succeeds", async (t) => {
  const larder = await startAppliance({ env: { ...oidcEnv(), NODE_EXTRA_CA_CERTS: join(dir, "ca.pem") } })
  t.teardown(() => larder.stop())
  const status = await statusAfterDiscovery(larder.webUrl)
  t.equal(status.discovery.ok, true, status.discovery.error ?? "")
  t.same(await (await fetch(`${larder.webUrl}/api/v1/oidc/available`)).json(), { available: true, discovery: "ok" })
})

t.test("with --ca-file, discovery succeeds", async (t) => {
  const larder = await startAppliance({ env: oidcEnv(), args: ["--ca-file", join(dir, "ca.pem")] })
  t.teardown(() => larder.stop())
  t.equal((await statusAfterDiscovery(larder.webUrl)).discovery.ok, true)
})
