// The gate's protocol against real providers, without a browser: sign-in, /oauth2/auth, tampered
// cookies, server-side sign-out (acceptance 5), an issuer that differs from the tokens' and a
// client without the audience mapper (acceptance 3), and a second, separately configured provider
// reached only through its discovery URL (acceptance 7).
import t from "tap"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { startAppliance, tempDir, type Appliance } from "../support/appliance.ts"
import { makeBrowserless } from "../support/browserless.ts"
import { waitForGate } from "../support/gateStack.ts"
import { freePort } from "../support/ports.ts"
import { gateSecret, testRealm, writeRealmFile } from "../support/realm.ts"

const ports = { idp: 0, external: 0, mismatch: 0, noAudience: 0, slash: 0, redirects: 0 }
let idp: Appliance
let issuer: string

const gateArgs = (extra: ReadonlyArray<string>) => [
  "--client-secret", gateSecret,
  "--cookie-secure=false",
  "--set-xauthrequest",
  ...extra
]

t.before(async () => {
  for (const name of Object.keys(ports) as Array<keyof typeof ports>) ports[name] = await freePort()
  const callbacks = Object.values(ports).map((port) => `http://127.0.0.1:${port}/oauth2/callback`)
  issuer = `http://127.0.0.1:${ports.idp}/auth/realms/apps`
  idp = await startAppliance({
    webPort: ports.idp,
    args: [
      ...gateArgs(["--client-id", "gate", "--oidc-issuer-url", issuer]),
      "--external-url", `http://127.0.0.1:${ports.idp}`,
      "--idp-realm-file", writeRealmFile(testRealm({ gateRedirects: callbacks }))
    ]
  })
  await waitForGate(idp.webUrl)
})
t.teardown(() => idp?.stop())

/** signs in through the gate at `gateUrl`; returns the client and the last answer */
const signIn = async (gateUrl: string, username = "alice", password = `${username}-password`) => {
  const browser = makeBrowserless()
  const toLogin = await browser.follow(`${gateUrl}/oauth2/start?rd=${encodeURIComponent("/after-login")}`)
  const loginPage = toLogin.at(-1)!
  const hops = await browser.submitLogin(loginPage, username, password)
  return { browser, loginPage, hops, last: hops.at(-1)! }
}

t.test("sign-in, /oauth2/auth, tampered cookies and server-side sign-out", async (t) => {
  const gate = idp.webUrl
  const anonymous = await fetch(`${gate}/oauth2/auth`)
  t.equal(anonymous.status, 401, "no cookie: 401")

  const { browser, hops } = await signIn(gate)
  const callback = hops.find((hop) => hop.url.includes("/oauth2/callback"))
  t.equal(callback?.status, 302, "the callback redirects")
  t.equal(callback?.headers.location, "/after-login", "to the rd it was given")
  const setCookie = String(callback?.headers["set-cookie"])
  t.match(setCookie, /_oauth2_proxy=[\w-]+\.[\w-]+; Path=\/; Max-Age=604800; HttpOnly; SameSite=Lax/)
  t.ok(setCookie.length < 400, `small Set-Cookie (${setCookie.length} bytes) whatever the token size`)

  const auth = await browser.send(`${gate}/oauth2/auth`)
  t.equal(auth.status, 200)
  t.equal(auth.headers["x-auth-request-preferred-username"], "alice")
  t.equal(auth.headers["x-auth-request-email"], "alice@example.test")
  t.notOk(auth.headers["x-auth-request-access-token"], "no token header without --pass-access-token")
  const info = JSON.parse((await browser.send(`${gate}/oauth2/userinfo`)).body)
  t.equal(info.preferredUsername, "alice")
  t.ok(info.groups.includes("/platform/oncall"))

  t.equal((await browser.send(`${gate}/oauth2/auth?allowed_groups=/nobody`)).status, 403, "allowed_groups narrows per location")
  t.equal((await browser.send(`${gate}/oauth2/auth?allowed_groups=/nobody,/platform/oncall`)).status, 200)

  const cookie = browser.cookies().find((c) => c.name === "_oauth2_proxy")!
  const [id, signature] = cookie.value.split(".")
  const flip = (text: string) => text.slice(0, -1) + (text.endsWith("A") ? "B" : "A")
  for (const [label, value] of [
    ["signature changed", `${id}.${flip(signature)}`],
    ["id changed", `${flip(id)}.${signature}`],
    ["signature dropped", id],
    ["signature truncated", `${id}.${signature.slice(1)}`]
  ] as const) {
    const response = await fetch(`${gate}/oauth2/auth`, { headers: { cookie: `_oauth2_proxy=${value}` } })
    t.equal(response.status, 401, `tampered cookie refused: ${label}`)
  }

  const metrics = await (await fetch(`${idp.lanUrl}/service/rest/metrics/prometheus`, { headers: { authorization: idp.auth } })).text()
  t.match(metrics, /larder_gate_auth_total\{status="200"\} [1-9]/, "answers counted by status")
  t.match(metrics, /larder_gate_auth_total\{status="401"\} [1-9]/)
  t.match(metrics, /larder_gate_sign_ins_total\{result="ok"\} 1/, "sign-ins counted")

  const stolen = `_oauth2_proxy=${cookie.value}`
  t.equal((await fetch(`${gate}/oauth2/auth`, { headers: { cookie: stolen } })).status, 200, "the cookie works from anywhere while the session lives")
  const out = await browser.send(`${gate}/oauth2/sign_out?rd=/bye`)
  t.equal(out.status, 302)
  t.equal(out.headers.location, "/bye")
  t.match(String(out.headers["set-cookie"]), /_oauth2_proxy=; Path=\/; Max-Age=0/)
  t.equal((await fetch(`${gate}/oauth2/auth`, { headers: { cookie: stolen } })).status, 401, "a copy of the cookie is dead after sign-out: the session is gone server-side")
})

t.test("wrong password and disabled users stay on the login page", async (t) => {
  const wrong = await signIn(idp.webUrl, "alice", "not-her-password")
  t.equal(wrong.last.status, 401)
  t.match(wrong.last.body, /role="alert"[^>]*>Invalid username or password\./)
  const disabled = await signIn(idp.webUrl, "mallory")
  t.equal(disabled.last.status, 401)
  t.match(disabled.last.body, /Account is disabled/)
  const unknown = await signIn(idp.webUrl, "nobody", "whatever")
  t.match(unknown.last.body, /Invalid username or password\./, "an unknown user gets the same message as a wrong password")
})

t.test("the state must come back to the browser that started the sign-in", async (t) => {
  const attacker = makeBrowserless()
  const started = await attacker.send(`${idp.webUrl}/oauth2/start?rd=/`)
  const state = new URL(String(started.headers.location)).searchParams.get("state")
  const victim = makeBrowserless()
  const forged = await victim.send(`${idp.webUrl}/oauth2/callback?code=anything&state=${state}`)
  t.equal(forged.status, 403, "a callback without the matching sign-in cookie is refused")
  t.match(forged.body, /not started in this browser/)
})

t.test("a second provider instance, reached only through its discovery URL (configured through OAUTH2_PROXY_*)", async (t) => {
  const gate = await startAppliance({
    webPort: ports.external,
    env: {
      OAUTH2_PROXY_CLIENT_ID: "gate",
      OAUTH2_PROXY_CLIENT_SECRET: gateSecret,
      OAUTH2_PROXY_OIDC_ISSUER_URL: issuer,
      OAUTH2_PROXY_COOKIE_SECURE: "false",
      OAUTH2_PROXY_SET_XAUTHREQUEST: "true"
    }
  })
  t.teardown(() => gate.stop())
  await waitForGate(gate.webUrl)
  const { browser, loginPage, last } = await signIn(gate.webUrl)
  t.ok(loginPage.url.startsWith(`${issuer}/login-actions/authenticate/`), "the login page is the other instance's")
  t.equal(last.url, `${gate.webUrl}/after-login`)
  const auth = await browser.send(`${gate.webUrl}/oauth2/auth`)
  t.equal(auth.status, 200)
  t.equal(auth.headers["x-auth-request-preferred-username"], "alice")
})

t.test("an issuer that differs from the tokens' fails sign-in with oauth2-proxy's log line", async (t) => {
  const configured = `http://localhost:${ports.idp}/auth/realms/apps`
  const endpoints = `${issuer}/protocol/openid-connect`
  const gate = await startAppliance({
    webPort: ports.mismatch,
    args: gateArgs([
      "--client-id", "gate",
      "--oidc-issuer-url", configured,
      "--skip-oidc-discovery",
      "--login-url", `${endpoints}/auth`,
      "--redeem-url", `${endpoints}/token`,
      "--oidc-jwks-url", `${endpoints}/certs`
    ])
  })
  t.teardown(() => gate.stop())
  await waitForGate(gate.webUrl)
  const { hops } = await signIn(gate.webUrl)
  const callback = hops.find((hop) => hop.url.includes("/oauth2/callback"))
  t.equal(callback?.status, 403, "sign-in fails")
  t.notOk(hops.some((hop) => hop.headers["set-cookie"]?.toString().includes("_oauth2_proxy=")), "no session cookie")
  t.match(gate.output(), `invalid issuer: expected ${configured}, got ${issuer}\n`)
})

t.test("a discovery document whose issuer differs (a trailing slash counts) stops the gate", async (t) => {
  const gate = await startAppliance({ webPort: ports.slash, args: gateArgs(["--client-id", "gate", "--oidc-issuer-url", `${issuer}/`]) })
  t.teardown(() => gate.stop())
  const deadline = Date.now() + 10_000
  while (!gate.output().includes("gate stopped") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  t.match(gate.output(), `invalid issuer: expected ${issuer}/, got ${issuer}\n`)
  const ready = await fetch(`${gate.webUrl}/ready`)
  t.equal(ready.status, 503)
  t.match(await ready.text(), /gate stopped: invalid issuer/)
  const start = await fetch(`${gate.webUrl}/oauth2/start?rd=/`, { redirect: "manual" })
  t.equal(start.status, 500, "sign-in does not start")
})

t.test("a client without the audience mapper fails with the audience message (configured by oauth2-proxy's TOML file)", async (t) => {
  const config = join(tempDir(), "oauth2-proxy.cfg")
  writeFileSync(config, `provider = "keycloak-oidc"\nclient_id = "legacy-gate"\nclient_secret = "${gateSecret}"\noidc_issuer_url = "${issuer}"\ncookie_secure = false\n`)
  const gate = await startAppliance({ webPort: ports.noAudience, args: ["--gate-config", config] })
  t.teardown(() => gate.stop())
  await waitForGate(gate.webUrl)
  const { hops } = await signIn(gate.webUrl)
  const callback = hops.find((hop) => hop.url.includes("/oauth2/callback"))
  t.equal(callback?.status, 403)
  t.match(gate.output(), "invalid audience: access token aud [account] does not contain client id legacy-gate (add an audience mapper for legacy-gate to the client)")
})

t.test("/oauth2/start refuses every open-redirect payload and lets allowed hosts through", async (t) => {
  const domains = [".example.test", "exact.example.org", ".ports.example.org:*", "www.whitelisteddomain.tld"]
  const gate = await startAppliance({
    webPort: ports.redirects,
    args: gateArgs(["--client-id", "gate", "--oidc-issuer-url", issuer, "--whitelist-domain", domains.join(",")])
  })
  t.teardown(() => gate.stop())
  await waitForGate(gate.webUrl)
  const start = (rd: string) => fetch(`${gate.webUrl}/oauth2/start?rd=${encodeURIComponent(rd)}`, { redirect: "manual" })

  // oauth2-proxy's corpus (its test decodes each line as a query value, as a server does)
  const corpus = readFileSync(new URL("../gate/fixtures/openredirects.txt", import.meta.url), "utf8").split("\n").slice(1)
    .filter((line) => line !== "")
    .map((line) => new URLSearchParams(`rd=${line.replace(/&/g, "%26").replace(/#/g, "%23")}`).get("rd")!)
  let refused = 0
  const passed: Array<string> = []
  for (const rd of corpus) {
    const answer = await start(rd)
    await answer.arrayBuffer()
    if (answer.status === 400) refused++
    else passed.push(`${answer.status} ${JSON.stringify(rd)}`)
  }
  t.equal(refused, corpus.length, `all ${corpus.length} payloads of oauth2-proxy's openredirects.txt get 400${passed.length === 0 ? "" : `; passed: ${passed.slice(0, 5).join(", ")}`}`)

  // the advisories' payloads and the issue's list
  for (const rd of [
    "/\\evil.com", "/\t/evil.com", "//evil.com/", "\\/evil.com", "https://evil.com", "javascript:alert(1)",
    "https://app.example.test@evil.com/", "https://evil.com\\@app.example.test/", "/%2F%2Fevil.com", "/%5Cevil.com",
    " //evil.com", "https://evilexample.test/", "https://evil.com/.example.test", "/a//b", "/a/./b", "/a/../b",
    "https://exact.example.org.evil.com/", "https://sub.exact.example.org/", "https://app.example.test:8443/x"
  ]) {
    const answer = await start(rd)
    t.equal(answer.status, 400, `refused: ${JSON.stringify(rd)}`)
    if (rd === "https://evil.com") t.match(await answer.text(), /host evil\.com is not under --whitelist-domain/, "the page says why")
    else await answer.arrayBuffer()
  }
  for (const [rd, note] of [
    ["https://example.test/", "the bare domain of a leading-dot entry"],
    ["https://deep.app.example.test/path?q=1", "any subdomain of a leading-dot entry"],
    ["https://exact.example.org/", "an exact entry"],
    ["https://a.ports.example.org:9443/", "the :* port wildcard"],
    ["/dashboard?tab=2", "a relative path"]
  ] as const) {
    const answer = await start(rd)
    t.equal(answer.status, 302, `allowed: ${rd} (${note})`)
    t.ok(answer.headers.get("location")?.startsWith(`${issuer}/protocol/openid-connect/auth?`), "on to the provider")
  }
})
