// /api/v1/user/oidc/login without a browser: ID tokens from the embedded provider (public client,
// PKCE), Dependency-Track's form field, teams from the groups claim through OIDC mappings
// (ALPINE_OIDC_TEAMS_PROVISIONING, and its real name ALPINE_OIDC_TEAM_SYNCHRONIZATION), default
// teams, and refusals: a token for another client, provisioning off.
import t from "tap"
import { createHash, randomBytes } from "node:crypto"
import { startAppliance, type Appliance } from "../support/appliance.ts"
import { makeBrowserless } from "../support/browserless.ts"
import { freePort } from "../support/ports.ts"
import { testRealm, writeRealmFile } from "../support/realm.ts"

const redirect = "http://spa.example.test/callback"

/** an ID token for `username` from the provider, through the public client `spa` with PKCE */
const idTokenFor = async (issuer: string, username: string) => {
  const verifier = randomBytes(32).toString("base64url")
  const url = new URL(`${issuer}/protocol/openid-connect/auth`)
  url.search = new URLSearchParams({
    response_type: "code", client_id: "spa", redirect_uri: redirect, scope: "openid email profile", state: "s", nonce: "n",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"), code_challenge_method: "S256"
  }).toString()
  const browser = makeBrowserless()
  const login = await browser.follow(url.href)
  const hops = await browser.submitLogin(login.at(-1)!, username, `${username}-password`, (next) => next.startsWith(redirect))
  const code = new URL(String(hops.at(-1)!.headers.location)).searchParams.get("code")!
  const token = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirect, client_id: "spa", code_verifier: verifier })
  })
  return ((await token.json()) as { id_token: string }).id_token
}

const start = async (env: Record<string, string>) => {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}/auth/realms/apps`
  const larder = await startAppliance({
    webPort: port,
    args: ["--external-url", `http://127.0.0.1:${port}`, "--idp-realm-file", writeRealmFile(testRealm({ gateRedirects: [], publicRedirects: [redirect], publicGroupsMapper: true }))],
    env: { ALPINE_OIDC_ENABLED: "true", ALPINE_OIDC_CLIENT_ID: "spa", ALPINE_OIDC_ISSUER: issuer, ...env }
  })
  return { larder, issuer }
}

const adminToken = async (larder: Appliance) =>
  (await fetch(`${larder.webUrl}/api/v1/user/login`, { method: "POST", body: new URLSearchParams({ username: larder.username, password: larder.password }) })).text()

const api = async (larder: Appliance, token: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${larder.webUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  // the API's JSON, read loosely in this test
  return { status: response.status, body: (await response.json().catch(() => undefined)) as any }
}

t.test("teams from the groups claim through OIDC mappings, and default teams", async (t) => {
  const { larder, issuer } = await start({ ALPINE_OIDC_USER_PROVISIONING: "true", ALPINE_OIDC_TEAM_SYNCHRONIZATION: "true", ALPINE_OIDC_TEAMS_DEFAULT: "Portfolio Managers" })
  t.teardown(() => larder.stop())
  const admin = await adminToken(larder)
  const oncall = (await api(larder, admin, "PUT", "/api/v1/team", { name: "oncall" })).body
  const group = (await api(larder, admin, "PUT", "/api/v1/oidc/group", { name: "/platform/oncall" })).body
  t.equal((await api(larder, admin, "PUT", "/api/v1/oidc/mapping", { team: oncall.uuid, group: group.uuid })).status, 201)

  // Dependency-Track's form field instead of the Authorization header
  const login = await fetch(`${larder.webUrl}/api/v1/user/oidc/login`, { method: "POST", body: new URLSearchParams({ idToken: await idTokenFor(issuer, "alice") }) })
  t.equal(login.status, 200)
  const session = await login.text()
  const self = (await api(larder, session, "GET", "/api/v1/user/self")).body as { username: string; teams: Array<{ name: string }>; permissions: Array<{ name: string }> }
  t.equal(self.username, "alice", "ALPINE_OIDC_USERNAME_CLAIM defaults to preferred_username")
  t.same(self.teams.map((team) => team.name).sort(), ["Portfolio Managers", "oncall"], "the mapped group's team and the default team")
  t.ok(self.permissions.some((p) => p.name === "VIEW_PORTFOLIO"))

  const crowd = await fetch(`${larder.webUrl}/api/v1/user/oidc/login`, { method: "POST", headers: { authorization: `Bearer ${await idTokenFor(issuer, "crowd")}` } })
  const crowdSelf = (await api(larder, await crowd.text(), "GET", "/api/v1/user/self")).body as { teams: Array<{ name: string }> }
  t.same(crowdSelf.teams.map((team) => team.name), ["Portfolio Managers"], "groups without a mapping give no team")
})

t.test("refusals: a token for another client, a forged token, provisioning off", async (t) => {
  const { larder, issuer } = await start({ ALPINE_OIDC_CLIENT_ID: "gate" })
  t.teardown(() => larder.stop())
  const otherClient = await fetch(`${larder.webUrl}/api/v1/user/oidc/login`, { method: "POST", headers: { authorization: `Bearer ${await idTokenFor(issuer, "alice")}` } })
  t.equal(otherClient.status, 401)
  t.match(((await otherClient.json()) as { detail: string }).detail, /invalid audience: ID token aud \[spa\] does not contain client id gate/)
  const token = await idTokenFor(issuer, "alice")
  const [header, payload] = token.split(".")
  const forged = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), aud: "gate" })).toString("base64url")}.${token.split(".")[2]}`
  const refused = await fetch(`${larder.webUrl}/api/v1/user/oidc/login`, { method: "POST", headers: { authorization: `Bearer ${forged}` } })
  t.equal(refused.status, 401)
  t.match(((await refused.json()) as { detail: string }).detail, /ID token refused: signature verification failed/)
})

t.test("provisioning off: an unknown OIDC user is refused", async (t) => {
  const { larder, issuer } = await start({ ALPINE_OIDC_USER_PROVISIONING: "false" })
  t.teardown(() => larder.stop())
  const answer = await fetch(`${larder.webUrl}/api/v1/user/oidc/login`, { method: "POST", headers: { authorization: `Bearer ${await idTokenFor(issuer, "alice")}` } })
  t.equal(answer.status, 401)
  t.match(((await answer.json()) as { detail: string }).detail, /user alice does not exist and user provisioning is off \(ALPINE_OIDC_USER_PROVISIONING\)/)
})
