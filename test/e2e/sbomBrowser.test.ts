// Acceptance 3 of the SBOM intake: headless chromium signs in through /sbom/ with the embedded
// provider as a public PKCE client. The code is exchanged from the browser across origins (the page
// on localhost, the provider on 127.0.0.1), so the provider's CORS for Web Origins is exercised.
// The first login provisions a user with no team and an empty dashboard; once an administrator
// adds the user to a team with VIEW_PORTFOLIO, the dashboard lists the project.
import t from "tap"
import { chromium, type Browser } from "playwright-core"
import { startAppliance, type Appliance } from "../support/appliance.ts"
import { freePort } from "../support/ports.ts"
import { testRealm, writeRealmFile } from "../support/realm.ts"

let larder: Appliance
let browser: Browser
let port: number

t.before(async () => {
  port = await freePort()
  const issuer = `http://127.0.0.1:${port}/auth/realms/apps`
  larder = await startAppliance({
    webPort: port,
    args: [
      "--external-url", `http://127.0.0.1:${port}`,
      "--idp-realm-file", writeRealmFile(testRealm({ gateRedirects: [], publicRedirects: [`http://localhost:${port}/sbom/`], webOrigins: [`http://localhost:${port}`] }))
    ],
    env: {
      ALPINE_OIDC_ENABLED: "true",
      ALPINE_OIDC_CLIENT_ID: "spa",
      ALPINE_OIDC_ISSUER: issuer,
      ALPINE_OIDC_USERNAME_CLAIM: "preferred_username",
      ALPINE_OIDC_USER_PROVISIONING: "true",
      LARDER_SBOM_OIDC_NAME: "Test Apps"
    }
  })
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] })
})
t.teardown(async () => {
  await browser?.close()
  await larder?.stop()
})

const adminApi = async (method: string, path: string, body?: unknown) => {
  const login = await fetch(`${larder.webUrl}/api/v1/user/login`, { method: "POST", body: new URLSearchParams({ username: larder.username, password: larder.password }) })
  const token = await login.text()
  const response = await fetch(`${larder.webUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  // the API's JSON, read loosely in this test
  return { status: response.status, body: await response.json().catch(() => undefined) as any }
}

t.test("config.json comes from the running configuration", async (t) => {
  const config = await (await fetch(`${larder.webUrl}/static/config.json`)).json()
  t.same(config, { OIDC_CLIENT_ID: "spa", OIDC_ISSUER: `http://127.0.0.1:${port}/auth/realms/apps`, OIDC_FLOW: "code", OIDC_SCOPE: "openid email profile", OIDC_DISPLAY_NAME: "Test Apps" })
})

t.test("OIDC sign-in from the browser, provisioning, then access through a team", async (t) => {
  const page = await browser.newPage()
  const errors: Array<string> = []
  page.on("console", (message) => { if (message.type() === "error") errors.push(`${message.text()} ${message.location().url}`) })
  await page.goto(`http://localhost:${port}/sbom/`)
  await page.getByRole("button", { name: "Sign in with Test Apps" }).click()
  await page.waitForURL(/\/login-actions\/authenticate\//)
  await page.getByLabel("Username or email").fill("alice")
  await page.getByLabel("Password").fill("alice-password")
  await page.getByRole("button", { name: "Sign in" }).click()
  const notice = page.locator("#no-team")
  await notice.waitFor({ timeout: 15_000 }).catch(async () => {
    throw new Error(`no dashboard; page says: ${await page.locator("main").textContent()} ${errors.join(" ")}`)
  })
  t.match(await notice.textContent(), /signed in as alice, but you are not a member of any team yet\. An administrator must add you to a team with the VIEW_PORTFOLIO permission/)
  t.equal(page.url(), `http://localhost:${port}/sbom/`, "the code is gone from the address bar")
  t.match(larder.output(), /SBOM: provisioned OIDC user alice \(no team, no permissions\)/)

  const provisioned = (await adminApi("GET", "/api/v1/user/oidc")).body.find((user: { username: string }) => user.username === "alice")
  t.same(provisioned.teams, [], "provisioned with no team")
  t.same(provisioned.permissions, [], "and no permissions")

  // a pipeline uploads a project; an administrator puts alice in a team that may view the portfolio
  const automation = (await adminApi("GET", "/api/v1/team")).body.find((team: { name: string }) => team.name === "Automation")
  const key = (await adminApi("PUT", `/api/v1/team/${automation.uuid}/key`)).body.key
  const bom = JSON.stringify({ bomFormat: "CycloneDX", specVersion: "1.4", version: 1, components: [{ type: "container", name: "nginx", version: "1.25" }] })
  const upload = await fetch(`${larder.webUrl}/api/v1/bom`, {
    method: "PUT",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ projectName: "storefront", projectVersion: "7", autoCreate: true, bom: Buffer.from(bom).toString("base64") })
  })
  t.equal(upload.status, 200)
  const viewers = (await adminApi("PUT", "/api/v1/team", { name: "viewers" })).body
  t.equal((await adminApi("POST", `/api/v1/permission/VIEW_PORTFOLIO/team/${viewers.uuid}`)).status, 200)
  t.equal((await adminApi("POST", "/api/v1/user/alice/membership", { uuid: viewers.uuid })).status, 200)

  await page.reload()
  const table = page.locator("#projects")
  await table.waitFor({ timeout: 10_000 })
  t.match(await table.textContent(), /storefront\s*7/, "the dashboard lists the project")
  t.same(errors, [], "no errors in the browser console")
  await page.close()
})

t.test("the page's token exchange needs the provider's CORS for this origin", async (t) => {
  // what the browser sent: an Origin header the client's Web Origins lists; any other is refused
  const token = `http://127.0.0.1:${port}/auth/realms/apps/protocol/openid-connect/token`
  const listed = await fetch(token, { method: "OPTIONS", headers: { origin: `http://localhost:${port}`, "access-control-request-method": "POST" } })
  t.equal(listed.headers.get("access-control-allow-origin"), `http://localhost:${port}`)
})
