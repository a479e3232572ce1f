// The oauth2-proxy-compatible gate on the web listener: /oauth2/auth (nginx's auth_request),
// /oauth2/start, /oauth2/callback, /oauth2/sign_in, /oauth2/sign_out, /oauth2/userinfo, /ping and
// /ready, answered on node's request/response. A valid session is answered synchronously from the
// index, so the subrequest nginx makes for every protected request costs a cookie check and a read.
import { createHash } from "node:crypto"
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http"
import { escapeHtml } from "../idp/pages.ts"
import { publicOrigin } from "../http/publicBase.ts"
import type { SourceRanges } from "../http/SourceRanges.ts"
import { identityOf, missingProfileClaims, refusal } from "./identity.ts"
import type { GateOptions } from "./options.ts"
import { discoverProvider, makeProviderClient, TokenError, type ProviderClient } from "./provider.ts"
import { checkRedirect } from "./redirect.ts"
import { makeSessionActor } from "./SessionActor.ts"
import { boundedCache, newId, readCookie, signId, verifySignedId, type GateSession, type SessionStore } from "./sessions.ts"

const sessionPurpose = "session"
const csrfPurpose = "csrf"
const loginTtlMs = 10 * 60_000

type GateState =
  | { readonly kind: "starting"; readonly reason: string }
  | { readonly kind: "ready"; readonly client: ProviderClient }
  | { readonly kind: "stopped"; readonly reason: string }

export interface GateHandlerOptions {
  readonly options: GateOptions
  readonly store: SessionStore
  readonly trustedProxies: SourceRanges | undefined
  readonly log: (level: "info" | "warn" | "error", message: string) => void
  /** counts /oauth2/auth answers by status (metrics) */
  readonly countAuth?: ((status: number) => void) | undefined
  /** counts sign-ins by result (metrics) */
  readonly countSignIn?: ((result: "ok" | "refused" | "failed") => void) | undefined
}

const page = (title: string, message: string, extra = "") =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
  `<title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem}` +
  `a.button{display:inline-block;padding:.6rem 1.2rem;background:#2a6fdb;color:#fff;border-radius:4px;text-decoration:none}</style></head>` +
  `<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${extra}</main></body></html>`

const sendPage = (response: ServerResponse, status: number, title: string, message: string, headers: OutgoingHttpHeaders = {}, extra = "") => {
  const body = page(title, message, extra)
  response.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "content-length": Buffer.byteLength(body), ...headers })
  response.end(body)
}

const sendText = (response: ServerResponse, status: number, text: string, headers: OutgoingHttpHeaders = {}) => {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "content-length": Buffer.byteLength(text), ...headers })
  response.end(text)
}

const redirectTo = (response: ServerResponse, location: string, headers: OutgoingHttpHeaders = {}) => {
  response.writeHead(302, { location, "cache-control": "no-store", "content-length": 0, ...headers })
  response.end()
}

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

/**
 * X-Auth-Request-* for a session, kept under `budget` bytes: groups are cut (and counted in
 * X-Auth-Request-Groups-Omitted) and the access token left out before nginx's 4 KiB buffer could
 * turn the answer into a 502.
 */
export const identityHeaders = (options: GateOptions, session: GateSession): { headers: Record<string, string>; trimmed: string | undefined } => {
  const headers: Record<string, string> = {}
  if (!options.setXAuthRequest && !options.passAccessToken) return { headers, trimmed: undefined }
  let used = 0
  const add = (name: string, value: string) => {
    headers[name] = value
    used += name.length + value.length + 4
  }
  if (options.setXAuthRequest) {
    add("x-auth-request-user", session.user)
    if (session.email !== undefined) add("x-auth-request-email", session.email)
    if (session.preferredUsername !== undefined) add("x-auth-request-preferred-username", session.preferredUsername)
  }
  const notes: Array<string> = []
  const tokenCost = options.passAccessToken ? "x-auth-request-access-token".length + session.accessToken.length + 4 : 0
  if (options.passAccessToken) {
    if (used + tokenCost <= options.authHeadersMaxBytes) add("x-auth-request-access-token", session.accessToken)
    else notes.push(`access token (${session.accessToken.length} bytes) left out`)
  }
  if (options.setXAuthRequest && session.groups.length > 0) {
    const room = options.authHeadersMaxBytes - used - "x-auth-request-groups".length - 4 - 48
    let value = ""
    let kept = 0
    for (const group of session.groups) {
      const next = value === "" ? group : `${value},${group}`
      if (next.length > room) break
      value = next
      kept++
    }
    if (value !== "") add("x-auth-request-groups", value)
    if (kept < session.groups.length) {
      add("x-auth-request-groups-omitted", String(session.groups.length - kept))
      notes.push(`${session.groups.length - kept} of ${session.groups.length} groups left out`)
    }
  }
  return { headers, trimmed: notes.length === 0 ? undefined : notes.join(", ") }
}

export const makeGateHandler = (deps: GateHandlerOptions) => {
  const { options, store, trustedProxies, log } = deps
  let state: GateState = { kind: "starting", reason: "identity provider discovery has not run yet" }
  const actor = makeSessionActor({ options, store, client: () => (state.kind === "ready" ? state.client : undefined), log })
  const trimmedLogged = new Set<string>()
  // a session's headers are built once: sessions are immutable values, replaced on refresh
  const answers = new WeakMap<GateSession, ReturnType<typeof identityHeaders>>()

  const cookieDomain = (host: string | undefined): string | undefined => {
    const hostname = (host ?? "").replace(/:\d+$/, "").toLowerCase()
    return options.cookieDomains.find((domain) => {
      const bare = domain.replace(/^\./, "").toLowerCase()
      return hostname === bare || hostname.endsWith(`.${bare}`)
    })
  }
  const cookie = (request: IncomingMessage, name: string, value: string, maxAgeSeconds: number) => {
    const domain = cookieDomain(request.headers.host)
    return [
      `${name}=${value}`,
      "Path=/",
      `Max-Age=${maxAgeSeconds}`,
      ...(maxAgeSeconds === 0 ? ["Expires=Thu, 01 Jan 1970 00:00:00 GMT"] : []),
      ...(domain === undefined ? [] : [`Domain=${domain.startsWith(".") ? domain : `.${domain}`}`]),
      "HttpOnly",
      ...(options.cookieSecure ? ["Secure"] : []),
      "SameSite=Lax"
    ].join("; ")
  }
  const csrfCookieName = `${options.cookieName}_csrf`

  // an HMAC costs tens of µs; cookie values that verified once are remembered (only genuine ones get in)
  const verifiedCookies = boundedCache<string>(10_000)
  const sessionId = (request: IncomingMessage) => {
    const value = readCookie(request.headers.cookie, options.cookieName)
    if (value === undefined) return undefined
    const known = verifiedCookies.get(value)
    if (known !== undefined) return known
    const id = verifySignedId(options.cookieSecret, sessionPurpose, value)
    if (id !== undefined) verifiedCookies.set(value, id)
    return id
  }

  const origin = (request: IncomingMessage) => publicOrigin(request.headers, request.socket, trustedProxies)
  const redirectUri = (request: IncomingMessage) => options.redirectUrl ?? `${origin(request)}/oauth2/callback`

  const notReady = (response: ServerResponse) => {
    const reason = state.kind === "ready" ? "" : state.reason
    sendPage(response, state.kind === "stopped" ? 500 : 503, "Sign-in unavailable", state.kind === "stopped" ? `The gate is stopped: ${reason}` : `The gate is starting: ${reason}`)
  }

  const answerAuth = (request: IncomingMessage, response: ServerResponse, session: GateSession | undefined, query: URLSearchParams) => {
    if (session === undefined) {
      deps.countAuth?.(401)
      return sendText(response, 401, "Unauthorized\n")
    }
    const wanted = query.get("allowed_groups")
    if (wanted !== null && !wanted.split(",").some((group) => session.groups.includes(group))) {
      deps.countAuth?.(403)
      return sendText(response, 403, "Forbidden: not in any of allowed_groups\n")
    }
    let answer = answers.get(session)
    if (answer === undefined) {
      answer = identityHeaders(options, session)
      answers.set(session, answer)
    }
    const { headers, trimmed } = answer
    if (trimmed !== undefined && !trimmedLogged.has(session.user)) {
      trimmedLogged.add(session.user)
      log("warn", `auth headers for ${session.preferredUsername ?? session.user} kept under --auth-headers-max-bytes ${options.authHeadersMaxBytes}: ${trimmed}`)
    }
    deps.countAuth?.(200)
    response.writeHead(200, { "cache-control": "no-store", "content-length": 0, ...headers })
    response.end()
  }

  const auth = (request: IncomingMessage, response: ServerResponse, query: URLSearchParams) => {
    const id = sessionId(request)
    const current = id === undefined ? undefined : actor.current(id)
    if (current instanceof Promise) {
      current.then((session) => answerAuth(request, response, session, query), (error: Error) => {
        log("error", `/oauth2/auth failed: ${error.message}`)
        sendText(response, 500, "internal error\n")
      })
    } else {
      answerAuth(request, response, current, query)
    }
  }

  const start = async (request: IncomingMessage, response: ServerResponse, query: URLSearchParams) => {
    if (state.kind !== "ready") return notReady(response)
    const checked = checkRedirect(query.get("rd") ?? undefined, options.whitelistDomains)
    if (!checked.ok) {
      log("warn", checked.reason)
      return sendPage(response, 400, "Redirect refused", checked.reason)
    }
    const state_ = newId()
    const nonce = newId()
    const verifier = options.codeChallengeMethod === undefined ? undefined : newId() + newId()
    const callback = redirectUri(request)
    await store.putLogin(state_, { codeVerifier: verifier, nonce, redirect: checked.target, redirectUri: callback, expiresAt: Date.now() + loginTtlMs })
    const target = new URL(state.client.endpoints.authorization)
    target.searchParams.set("response_type", "code")
    target.searchParams.set("client_id", options.clientId)
    target.searchParams.set("redirect_uri", callback)
    target.searchParams.set("scope", options.scope)
    target.searchParams.set("state", state_)
    target.searchParams.set("nonce", nonce)
    if (verifier !== undefined) {
      target.searchParams.set("code_challenge", options.codeChallengeMethod === "plain" ? verifier : s256(verifier))
      target.searchParams.set("code_challenge_method", options.codeChallengeMethod!)
    }
    redirectTo(response, target.href, { "set-cookie": cookie(request, csrfCookieName, signId(options.cookieSecret, csrfPurpose, state_), loginTtlMs / 1000) })
  }

  const callback = async (request: IncomingMessage, response: ServerResponse, query: URLSearchParams) => {
    if (state.kind !== "ready") return notReady(response)
    const client = state.client
    const clearCsrf = { "set-cookie": cookie(request, csrfCookieName, "", 0) }
    const error = query.get("error")
    if (error !== null) {
      log("warn", `sign-in failed at the provider: ${error}${query.has("error_description") ? `: ${query.get("error_description")}` : ""}`)
      return sendPage(response, 403, "Sign-in failed", `The identity provider answered: ${query.get("error_description") ?? error}`, clearCsrf)
    }
    const stateParam = query.get("state") ?? ""
    const csrf = verifySignedId(options.cookieSecret, csrfPurpose, readCookie(request.headers.cookie, csrfCookieName))
    if (csrf === undefined || csrf !== stateParam) {
      log("warn", "sign-in refused: the state does not match this browser's sign-in cookie (expired, or started elsewhere)")
      return sendPage(response, 403, "Sign-in failed", "This sign-in was not started in this browser, or it expired. Start again.", clearCsrf)
    }
    const pending = await store.takeLogin(stateParam)
    const code = query.get("code")
    if (pending === undefined || code === null) {
      return sendPage(response, 403, "Sign-in failed", "This sign-in expired or was already used. Start again.", clearCsrf)
    }
    let session: GateSession
    try {
      const tokens = await client.redeem(code, pending.redirectUri, pending.codeVerifier)
      if (tokens.idToken === undefined) throw new TokenError("the token endpoint answered without an id_token (is the openid scope requested?)")
      const idClaims = await client.verifyIdToken(tokens.idToken, pending.nonce)
      const accessClaims = options.provider === "keycloak-oidc" ? await client.verifyAccessToken(tokens.accessToken) : {}
      const missing = options.provider === "keycloak-oidc" ? missingProfileClaims(idClaims) : []
      const profile = missing.length > 0 ? await client.userinfo(tokens.accessToken).catch((error: Error) => {
        log("warn", `userinfo for the claims missing from the ID token (${missing.join(", ")}) failed: ${error.message}`)
        return {}
      }) : {}
      const identity = identityOf(options, idClaims, accessClaims, profile)
      const refused = refusal(options, identity)
      if (refused !== undefined) {
        deps.countSignIn?.("refused")
        log("info", `sign-in refused: ${refused}`)
        return sendPage(response, 403, "Access denied", refused, clearCsrf)
      }
      const now = Date.now()
      session = {
        ...identity,
        accessToken: tokens.accessToken,
        idToken: tokens.idToken,
        refreshToken: tokens.refreshToken,
        accessExpiresAt: tokens.expiresAt,
        createdAt: now,
        expiresAt: now + options.cookieExpireSeconds * 1000
      }
    } catch (failure) {
      const message = (failure as Error).message
      deps.countSignIn?.(failure instanceof TokenError ? "refused" : "failed")
      log(failure instanceof TokenError ? "error" : "warn", message)
      return sendPage(response, failure instanceof TokenError ? 403 : 502, "Sign-in failed", message, clearCsrf)
    }
    const id = newId()
    await store.put(id, session)
    deps.countSignIn?.("ok")
    log("info", `signed in: ${session.preferredUsername ?? session.user} (${session.groups.length} groups and roles)`)
    redirectTo(response, pending.redirect, {
      "set-cookie": [cookie(request, options.cookieName, signId(options.cookieSecret, sessionPurpose, id), options.cookieExpireSeconds), clearCsrf["set-cookie"]]
    })
  }

  const signOut = async (request: IncomingMessage, response: ServerResponse, query: URLSearchParams) => {
    const id = sessionId(request)
    if (id !== undefined) {
      const session = store.get(id)
      await store.remove(id)
      if (session !== undefined) log("info", `signed out: ${session.preferredUsername ?? session.user}`)
    }
    const checked = checkRedirect(query.get("rd") ?? undefined, options.whitelistDomains)
    const clear = { "set-cookie": cookie(request, options.cookieName, "", 0) }
    if (!checked.ok) return sendPage(response, 400, "Signed out", `You are signed out. ${checked.reason}`, clear)
    redirectTo(response, checked.target, clear)
  }

  const userinfo = (request: IncomingMessage, response: ServerResponse) => {
    const id = sessionId(request)
    const session = id === undefined ? undefined : store.get(id)
    if (session === undefined) return sendText(response, 401, "Unauthorized\n")
    const body = JSON.stringify({ user: session.user, email: session.email, preferredUsername: session.preferredUsername, groups: session.groups })
    response.writeHead(200, { "content-type": "application/json", "cache-control": "no-store", "content-length": Buffer.byteLength(body) })
    response.end(body)
  }

  const signIn = (request: IncomingMessage, response: ServerResponse, query: URLSearchParams) => {
    const rd = query.get("rd") ?? "/"
    const startUrl = `/oauth2/start?rd=${encodeURIComponent(rd)}`
    if (options.skipProviderButton) return redirectTo(response, startUrl)
    sendPage(response, 200, "Sign in", "This application is protected. Sign in with your organisation account to continue.", {}, `<p><a class="button" href="${escapeHtml(startUrl)}">Sign in with ${escapeHtml(options.provider === "keycloak-oidc" ? "Keycloak" : "OpenID Connect")}</a></p>`)
  }

  const handler = (request: IncomingMessage, response: ServerResponse): boolean => {
    const url = request.url
    if (url === undefined) return false
    const queryAt = url.indexOf("?")
    const path = queryAt === -1 ? url : url.slice(0, queryAt)
    if (path === "/ping") {
      sendText(response, 200, "OK\n")
      return true
    }
    if (path === "/ready") {
      if (state.kind === "ready") sendText(response, 200, "OK\n")
      else sendText(response, 503, `gate ${state.kind}: ${state.reason}\n`)
      return true
    }
    if (!path.startsWith("/oauth2/")) return false
    const query = new URLSearchParams(queryAt === -1 ? "" : url.slice(queryAt + 1))
    const failed = (error: Error) => {
      log("error", `${path} failed: ${error.message}`)
      if (!response.headersSent) sendText(response, 500, "internal error\n")
    }
    switch (path) {
      case "/oauth2/auth":
        auth(request, response, query)
        return true
      case "/oauth2/start":
        start(request, response, query).catch(failed)
        return true
      case "/oauth2/callback":
        callback(request, response, query).catch(failed)
        return true
      case "/oauth2/sign_out":
        signOut(request, response, query).catch(failed)
        return true
      case "/oauth2/sign_in":
        signIn(request, response, query)
        return true
      case "/oauth2/userinfo":
        userinfo(request, response)
        return true
      default:
        sendText(response, 404, `not found: ${path}\n`)
        return true
    }
  }

  /** discovery with retries until it works; an issuer mismatch stops the gate for good */
  const run = async (signal: AbortSignal) => {
    let delay = 500
    while (!signal.aborted) {
      try {
        const endpoints = await discoverProvider(options)
        state = { kind: "ready", client: makeProviderClient(options, endpoints) }
        log("info", `gate ready: provider ${options.provider}, issuer ${options.issuerUrl}, client ${options.clientId}`)
        return
      } catch (error) {
        const message = (error as Error).message
        if (error instanceof TokenError) {
          state = { kind: "stopped", reason: message }
          log("error", message)
          log("error", `gate stopped: the discovery document's issuer must equal --oidc-issuer-url character for character`)
          return
        }
        state = { kind: "starting", reason: `discovery failed: ${message}` }
        log("warn", `gate: identity provider discovery failed (retrying in ${Math.round(delay / 1000)} s): ${message}`)
        await new Promise((resolve) => setTimeout(resolve, delay))
        delay = Math.min(delay * 2, 30_000)
      }
    }
  }

  return { handler, run, state: () => state.kind, sessions: () => store.count() }
}
