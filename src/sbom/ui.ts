// The SBOM intake's browser side at /sbom/: a sign-in page (a "Sign in with <name>" button only
// when OIDC is configured, and a visible message when discovery failed), the public-client
// authorization code + PKCE S256 flow done in the browser with oauth4webapi, the ID token posted
// to /api/v1/user/oidc/login, and a dashboard of the projects the user may see.
// /static/config.json is generated from the running configuration, never fixed at build time.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { ServerResponse } from "node:http"
import type { SbomOidc } from "./oidc.ts"

type Asset = (response: ServerResponse) => void

const send = (contentType: string, body: string | (() => string)): Asset => (response) => {
  const text = typeof body === "string" ? body : body()
  response.writeHead(200, { "content-type": contentType, "cache-control": "no-store", "content-length": Buffer.byteLength(text), "x-content-type-options": "nosniff" })
  response.end(text)
}

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>larder SBOM intake</title><link rel="icon" href="data:,">
<style>
body{font-family:system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d1f23}
header{background:#1d3557;color:#fff;padding:.8rem 1.5rem;display:flex;justify-content:space-between;align-items:center}
main{max-width:56rem;margin:2rem auto;padding:0 1rem}
section{background:#fff;border-radius:6px;box-shadow:0 1px 3px #0003;padding:1.5rem;margin-bottom:1rem}
button{padding:.6rem 1.2rem;font-size:1rem;border:0;border-radius:4px;background:#2a6fdb;color:#fff;cursor:pointer}
button.secondary{background:#e3e6ea;color:#1d1f23}
label{display:block;margin:.6rem 0 .2rem;font-weight:600}input{padding:.5rem;font-size:1rem;width:100%;box-sizing:border-box}
.notice{background:#fff4e5;border-left:4px solid #e08a00;padding:.8rem}.error{background:#fdecea;border-left:4px solid #c62828;padding:.8rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.45rem;border-bottom:1px solid #e3e6ea}
</style>
</head>
<body>
<header><strong>larder SBOM intake</strong><span id="who"></span></header>
<main id="app" aria-live="polite"><p>Loading…</p></main>
<script type="module" src="/sbom/app.js"></script>
</body>
</html>
`

const app = `import * as oauth from "/static/oauth4webapi.js"

const app = document.getElementById("app")
const who = document.getElementById("who")
const redirectUri = location.origin + "/sbom/"
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) key === "onclick" ? node.addEventListener("click", value) : node.setAttribute(key, value)
  for (const child of children) node.append(child)
  return node
}
const show = (...nodes) => app.replaceChildren(...nodes)
const fail = (message) => show(el("section", {}, el("p", { class: "error", role: "alert" }, message), el("button", { onclick: () => { sessionStorage.clear(); location.assign(redirectUri) } }, "Start again")))
const api = (path, token) => fetch(path, { headers: { authorization: "Bearer " + token } })

const config = await (await fetch("/static/config.json")).json()
const oidcConfigured = config.OIDC_CLIENT_ID !== "" && config.OIDC_ISSUER !== ""
const insecure = (issuer) => ({ [oauth.allowInsecureRequests]: issuer.protocol === "http:" })

const discover = async () => {
  const issuer = new URL(config.OIDC_ISSUER)
  const response = await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...insecure(issuer) })
  return [issuer, await oauth.processDiscoveryResponse(issuer, response)]
}

const signIn = async () => {
  const [issuer, as] = await discover()
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const nonce = oauth.generateRandomNonce()
  sessionStorage.setItem("sbom-login", JSON.stringify({ verifier, state, nonce }))
  const url = new URL(as.authorization_endpoint)
  url.searchParams.set("client_id", config.OIDC_CLIENT_ID)
  url.searchParams.set("redirect_uri", redirectUri)
  url.searchParams.set("response_type", "code")
  url.searchParams.set("scope", config.OIDC_SCOPE)
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier))
  url.searchParams.set("code_challenge_method", "S256")
  url.searchParams.set("state", state)
  url.searchParams.set("nonce", nonce)
  location.assign(url.href)
}

const callback = async () => {
  const pending = JSON.parse(sessionStorage.getItem("sbom-login") ?? "null")
  sessionStorage.removeItem("sbom-login")
  if (pending === null) throw new Error("This sign-in was not started in this browser tab.")
  const [issuer, as] = await discover()
  const client = { client_id: config.OIDC_CLIENT_ID }
  const params = oauth.validateAuthResponse(as, client, new URL(location.href), pending.state)
  // the code is exchanged here, in the browser: the provider must allow this origin (Web Origins)
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, pending.verifier, insecure(issuer))
  const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: pending.nonce, requireIdToken: true })
  const login = await fetch("/api/v1/user/oidc/login", { method: "POST", headers: { authorization: "Bearer " + result.id_token } })
  const text = await login.text()
  if (!login.ok) throw new Error("larder refused the sign-in: " + (JSON.parse(text).detail ?? text))
  sessionStorage.setItem("sbom-token", text)
  history.replaceState(null, "", redirectUri)
}

const loginView = async () => {
  const available = await (await fetch("/api/v1/oidc/available")).json()
  const parts = [el("h1", {}, "Sign in")]
  if (oidcConfigured && available.available) {
    if (available.discovery === "ok") {
      parts.push(el("p", {}, el("button", { id: "oidc-login", onclick: () => signIn().catch((e) => fail(e.message)) }, "Sign in with " + config.OIDC_DISPLAY_NAME)))
    } else {
      parts.push(el("p", { class: "notice", role: "alert" }, "Single sign-on is configured, but the identity provider cannot be reached: " + available.discovery))
    }
  }
  const form = el("form", {},
    el("label", { for: "username" }, "Username"), el("input", { id: "username", name: "username", autocomplete: "username" }),
    el("label", { for: "password" }, "Password"), el("input", { id: "password", name: "password", type: "password", autocomplete: "current-password" }),
    el("p", {}, el("button", { type: "submit", class: "secondary" }, "Sign in with a local account")))
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    const response = await fetch("/api/v1/user/login", { method: "POST", body: new URLSearchParams(new FormData(form)) })
    if (!response.ok) return fail("Invalid username or password.")
    sessionStorage.setItem("sbom-token", await response.text())
    await dashboard()
  })
  parts.push(el("h2", {}, "Local account"), form)
  show(el("section", {}, ...parts))
}

const dashboard = async () => {
  const token = sessionStorage.getItem("sbom-token")
  const self = await api("/api/v1/user/self", token)
  if (!self.ok) { sessionStorage.removeItem("sbom-token"); return loginView() }
  const user = await self.json()
  who.replaceChildren(user.username + " ", el("button", { class: "secondary", onclick: () => { sessionStorage.removeItem("sbom-token"); location.assign(redirectUri) } }, "Sign out"))
  const canView = user.permissions.some((p) => p.name === "VIEW_PORTFOLIO")
  if (!canView) {
    return show(el("section", {}, el("h1", {}, "Projects"), el("p", { id: "no-team", class: "notice" },
      "You are signed in as " + user.username + (user.teams.length === 0 ? ", but you are not a member of any team yet." : ", but none of your teams may view the portfolio.") +
      " An administrator must add you to a team with the VIEW_PORTFOLIO permission before projects show here.")))
  }
  const projects = await (await api("/api/v1/project", token)).json()
  const rows = projects.map((p) => el("tr", {}, el("td", {}, p.name), el("td", {}, p.version ?? ""), el("td", {}, p.lastBomImport ? new Date(p.lastBomImport).toLocaleString() : "never")))
  show(el("section", {}, el("h1", {}, "Projects"),
    projects.length === 0 ? el("p", {}, "No projects yet: upload a BOM to /api/v1/bom.") :
      el("table", { id: "projects" }, el("thead", {}, el("tr", {}, el("th", {}, "Project"), el("th", {}, "Version"), el("th", {}, "Last BOM"))), el("tbody", {}, ...rows))))
}

try {
  if (new URLSearchParams(location.search).has("code") || new URLSearchParams(location.search).has("error")) await callback()
  if (sessionStorage.getItem("sbom-token") !== null) await dashboard()
  else await loginView()
} catch (error) {
  fail(error.message)
}
`

/** the UI's files by path; config.json is computed on every request from the running configuration */
export const sbomAssets = (oidc: SbomOidc | undefined): Map<string, Asset> => {
  const require = createRequire(import.meta.url)
  const oauth4webapi = readFileSync(require.resolve("oauth4webapi"), "utf8")
  const config = () => {
    const enabled = oidc?.options.enabled === true
    return JSON.stringify({
      OIDC_CLIENT_ID: enabled ? oidc!.options.clientId : "",
      OIDC_ISSUER: enabled ? oidc!.options.issuer : "",
      OIDC_FLOW: "code",
      OIDC_SCOPE: "openid email profile",
      OIDC_DISPLAY_NAME: oidc?.options.displayName ?? ""
    })
  }
  const html = send("text/html; charset=utf-8", page)
  return new Map<string, Asset>([
    ["/static/config.json", send("application/json", config)],
    ["/sbom/static/config.json", send("application/json", config)],
    ["/static/oauth4webapi.js", send("text/javascript; charset=utf-8", oauth4webapi)],
    ["/sbom/app.js", send("text/javascript; charset=utf-8", app)],
    ["/sbom", html],
    ["/sbom/", html]
  ])
}
