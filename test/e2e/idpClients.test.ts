// Acceptance 6: an independent relying party (openid-client) completes the authorization code
// flow with PKCE as a public client against the embedded provider, reads userinfo, and the token
// endpoint's CORS answer follows the client's Web Origins. Also: Keycloak-shaped discovery,
// redirect URIs with a trailing `*`, PKCE required for public clients, key rotation.
import t from "tap"
import * as client from "openid-client"
import { runAppliance, startAppliance, type Appliance } from "../support/appliance.ts"
import { makeBrowserless } from "../support/browserless.ts"
import { freePort } from "../support/ports.ts"
import { testRealm, writeRealmFile } from "../support/realm.ts"

let idp: Appliance
let issuer: string
let args: Array<string>
let port: number
type Jwks = { keys: Array<{ kid: string; d?: string }> }
const spaOrigin = "http://spa.example.test:5173"

t.before(async () => {
  port = await freePort()
  issuer = `http://127.0.0.1:${port}/auth/realms/apps`
  args = [
      "--external-url", `http://127.0.0.1:${port}`,
      "--idp-realm-file",
      writeRealmFile(testRealm({ gateRedirects: [], publicRedirects: [`${spaOrigin}/callback/*`], webOrigins: [spaOrigin] }))
  ]
  idp = await startAppliance({ webPort: port, args })
})
t.teardown(() => idp?.stop())

t.test("openid-client: public client, code flow with PKCE S256, userinfo", async (t) => {
  const config = await client.discovery(new URL(issuer), "spa", undefined, client.None(), { execute: [client.allowInsecureRequests] })
  const metadata = config.serverMetadata()
  t.equal(metadata.issuer, issuer, "issuer: external URL + /auth/realms/<realm>")
  t.equal(metadata.authorization_endpoint, `${issuer}/protocol/openid-connect/auth`)
  t.equal(metadata.token_endpoint, `${issuer}/protocol/openid-connect/token`)
  t.equal(metadata.userinfo_endpoint, `${issuer}/protocol/openid-connect/userinfo`)
  t.equal(metadata.jwks_uri, `${issuer}/protocol/openid-connect/certs`)
  t.ok(metadata.code_challenge_methods_supported?.includes("S256"))

  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const redirectUri = `${spaOrigin}/callback/home`
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: "openid email profile",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state
  })
  const browser = makeBrowserless()
  const login = await browser.follow(url.href)
  t.match(login.at(-1)!.body, /Sign in to Test Apps/)
  // the app's redirect URI is not served here: stop there and read the code from the redirect
  const hops = await browser.submitLogin(login.at(-1)!, "alice", "alice-password", (next) => next.startsWith(spaOrigin))
  const last = hops.at(-1)!
  const back = typeof last.headers.location === "string" ? new URL(last.headers.location, last.url).href : ""
  t.ok(back.startsWith(`${redirectUri}?`), `redirected to the app's callback (matched by the trailing * rule): ${back.slice(0, 80)}`)

  const tokens = await client.authorizationCodeGrant(config, new URL(back), { pkceCodeVerifier: verifier, expectedState: state })
  t.ok(tokens.access_token, "access token")
  const claims = tokens.claims()!
  t.equal(claims.iss, issuer)
  t.equal(claims.aud, "spa")
  t.equal(claims.preferred_username, "alice")
  t.equal(claims.email, "alice@example.test")
  const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
  t.equal(info.preferred_username, "alice")
  t.equal(info.email, "alice@example.test")
  t.ok(tokens.refresh_token, "a refresh token")
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
  t.ok(refreshed.access_token && refreshed.access_token !== tokens.access_token, "the refresh token works")
})

t.test("a public client must use PKCE", async (t) => {
  const url = new URL(`${issuer}/protocol/openid-connect/auth`)
  url.search = new URLSearchParams({ response_type: "code", client_id: "spa", redirect_uri: `${spaOrigin}/callback/x`, scope: "openid", state: "s" }).toString()
  const answer = await fetch(url, { redirect: "manual" })
  const location = answer.headers.get("location") ?? ""
  t.match(location, /error=invalid_request/, "refused")
  t.match(decodeURIComponent(location.replace(/\+/g, " ")), /requires PKCE/, "because the code challenge is missing")
})

t.test("redirect URIs outside the registered ones are refused", async (t) => {
  const url = new URL(`${issuer}/protocol/openid-connect/auth`)
  url.search = new URLSearchParams({ response_type: "code", client_id: "spa", redirect_uri: "http://evil.example.test/callback/x", scope: "openid", code_challenge: "x".repeat(43), code_challenge_method: "S256" }).toString()
  const answer = await fetch(url, { redirect: "manual" })
  t.equal(answer.status, 400)
  t.match(await answer.text(), /redirect_uri did not match/)
})

t.test("repeated failed sign-ins pause the name, whether or not the user exists, and leave other names alone", async (t) => {
  const url = new URL(`${issuer}/protocol/openid-connect/auth`)
  url.search = new URLSearchParams({ response_type: "code", client_id: "spa", redirect_uri: `${spaOrigin}/callback/x`, scope: "openid", code_challenge: "c".repeat(43), code_challenge_method: "S256" }).toString()
  const loginPage = async () => {
    const browser = makeBrowserless()
    const page = (await browser.follow(url.href)).at(-1)!
    return { browser, page }
  }
  for (const [name, password] of [["crowd", "crowd-password"], ["nobody-here", "any-password"]]) {
    const { browser, page } = await loginPage()
    for (let attempt = 1; attempt <= 5; attempt++) {
      const answer = (await browser.submitLogin(page, name, `wrong-${attempt}`)).at(-1)!
      t.equal(answer.status, 401, `${name}: failure ${attempt} is an ordinary refusal`)
    }
    const paused = (await browser.submitLogin(page, name, password, (next) => next.startsWith(spaOrigin))).at(-1)!
    t.equal(paused.status, 429, `${name}: the sixth try is paused, even with the right password`)
    t.match(paused.body, /Too many failed sign-ins for this account\. Try again in 30 seconds\./)
    const retryAfter = Number(paused.headers["retry-after"])
    t.ok(retryAfter > 0 && retryAfter <= 30, `Retry-After ${retryAfter}`)
  }
  const { browser, page } = await loginPage()
  const upper = (await browser.submitLogin(page, "CROWD", "crowd-password")).at(-1)!
  t.equal(upper.status, 429, "the name is paused however it is spelled, and by email too")
  t.equal((await browser.submitLogin(page, "crowd@example.test", "crowd-password")).at(-1)!.status, 429)
  const other = await loginPage()
  const hops = await other.browser.submitLogin(other.page, "alice", "alice-password", (next) => next.startsWith(spaOrigin))
  const location = String(hops.at(-1)!.headers.location ?? "")
  t.ok(location.startsWith(`${spaOrigin}/callback/x?code=`), "another name signs in as usual")
})

t.test("the token endpoint's CORS answer follows Web Origins", async (t) => {
  const token = `${issuer}/protocol/openid-connect/token`
  const probe = (origin: string) =>
    fetch(token, {
      method: "POST",
      headers: { origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "not-a-code", client_id: "spa", redirect_uri: `${spaOrigin}/callback/x`, code_verifier: "v".repeat(43) }).toString()
    })
  const listed = await probe(spaOrigin)
  t.equal(listed.status, 400, "the made-up code is refused")
  t.equal(listed.headers.get("access-control-allow-origin"), spaOrigin, "a listed origin gets Access-Control-Allow-Origin (even on an error, so the app can read it)")
  const other = await probe("http://evil.example.test")
  t.equal(other.headers.get("access-control-allow-origin"), null, "an origin not listed does not")
  const preflight = await fetch(token, { method: "OPTIONS", headers: { origin: spaOrigin, "access-control-request-method": "POST" } })
  t.ok(preflight.status < 300, `preflight answered (${preflight.status})`)
  t.equal(preflight.headers.get("access-control-allow-origin"), spaOrigin)
})

t.test("Keycloak-shaped paths and errors", async (t) => {
  const realm = await (await fetch(issuer)).json() as Record<string, unknown>
  t.equal(realm.realm, "apps")
  t.equal(realm["token-service"], `${issuer}/protocol/openid-connect`)
  const missing = await fetch(`${idp.webUrl}/auth/realms/nope/.well-known/openid-configuration`)
  t.equal(missing.status, 404)
  t.same(await missing.json(), { error: "Realm does not exist" })
  const master = await (await fetch(`${idp.webUrl}/auth/realms/master/.well-known/openid-configuration`)).json() as Record<string, unknown>
  t.equal(master.issuer, `${idp.webUrl}/auth/realms/master`, "the master realm exists beside the application realm")
  const dev = await fetch(`${issuer}/interaction/x`)
  t.equal(dev.status, 404, "oidc-provider's development interaction pages are off")
})

t.test("keys rotate by command; the JWKS lists the current and previous key", async (t) => {
  const before = await (await fetch(`${issuer}/protocol/openid-connect/certs`)).json() as Jwks
  t.equal(before.keys.length, 1)
  t.notOk(before.keys[0].d, "no private parts in the JWKS")
  const rotated = await runAppliance(["idp", "rotate-keys", "--data-dir", idp.dataDir])
  t.equal(rotated.code, 0, rotated.output)
  t.match(rotated.output, new RegExp(`previous key ${before.keys[0].kid} stays in the JWKS`))
  await idp.stop()
  idp = await startAppliance({ dataDir: idp.dataDir, webPort: port, args })
  const after = await (await fetch(`${issuer}/protocol/openid-connect/certs`)).json() as Jwks
  t.equal(after.keys.length, 2)
  t.equal(after.keys[1].kid, before.keys[0].kid, "the previous key still verifies tokens it signed")
  t.not(after.keys[0].kid, before.keys[0].kid, "a new key signs")
})
