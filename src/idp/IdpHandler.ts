// The identity provider on the web listener: requests under /auth/realms/<realm>/ go to that
// realm's oidc-provider instance (mounted Express-style: req.url relative, req.originalUrl whole),
// except the login form and userinfo, which are ours. Answered on node's request/response like
// the artifact path; everything else falls through to the Effect handler.
import type { IncomingMessage, ServerResponse } from "node:http"
import { createLocalJWKSet, jwtVerify, type JWK } from "jose"
import type { NodeHandler } from "../http/Listeners.ts"
import { readBodyUpTo } from "../http/requestBody.ts"
import type { SourceRanges } from "../http/SourceRanges.ts"
import { loginPage, messagePage } from "./pages.ts"
import { commonHashCost, dummyPasswordCheck, verifyPassword } from "./passwords.ts"
import type { RealmUser } from "./realm.ts"
import { describeWait, makeSignInThrottle, type SignInThrottle } from "./signInThrottle.ts"
import { accountClaims, loginActionsPath, originAllowed, realmPath, subjectOf, userinfoRoute, type RealmRuntime } from "./realmProvider.ts"


const maxFormBytes = 8 * 1024

const readForm = async (request: IncomingMessage): Promise<URLSearchParams> =>
  new URLSearchParams((await readBodyUpTo(request, maxFormBytes, () => new Error(`form larger than ${maxFormBytes} bytes`))).toString("utf8"))

const send = (response: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}) => {
  response.writeHead(status, {
    "content-type": contentType,
    "cache-control": "no-store",
    "content-length": Buffer.byteLength(body),
    ...headers
  })
  response.end(body)
}

const sendJson = (response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) =>
  send(response, status, "application/json", JSON.stringify(value), headers)

/** X-Forwarded-* reach oidc-provider (in proxy mode) only from trusted proxies */
const stripForwarded = (request: IncomingMessage) => {
  for (const name of Object.keys(request.headers)) {
    if (name.startsWith("x-forwarded-")) delete request.headers[name]
  }
}

export interface IdpHandlerOptions {
  readonly realms: ReadonlyArray<RealmRuntime>
  readonly signingKeys: ReadonlyArray<JWK>
  readonly trustedProxies: SourceRanges | undefined
  readonly log: (level: "info" | "warn", message: string) => void
  /** failed sign-ins per name (defaults: 5 free, then 30 s doubling to 15 min) */
  readonly throttle?: SignInThrottle
}

export const makeIdpHandler = (options: IdpHandlerOptions): NodeHandler => {
  const realms = new Map(options.realms.map((runtime) => [runtime.realm.realm, runtime]))
  const callbacks = new Map(options.realms.map((runtime) => [runtime.realm.realm, runtime.provider.callback()]))
  const publicKeys = createLocalJWKSet({
    keys: options.signingKeys.map(({ kty, n, e, kid, alg, use }) => ({ kty, n, e, kid, alg, use }) as JWK)
  })

  const throttle = options.throttle ?? makeSignInThrottle()
  // an unknown name costs what the realm's users' checks cost (Keycloak imports: pbkdf2 or argon2)
  const realmHashCosts = new Map(options.realms.map((runtime) => [
    runtime.realm.realm,
    commonHashCost(runtime.realm.users.flatMap((user) => (user.passwordHash === undefined ? [] : [user.passwordHash])))
  ]))

  const findUser = (runtime: RealmRuntime, login: string): RealmUser | undefined => {
    const name = login.trim().toLowerCase()
    const byName = runtime.users.get(name)
    if (byName !== undefined) return byName
    return runtime.realm.users.find((user) => user.email !== undefined && user.email.toLowerCase() === name)
  }

  const login = async (runtime: RealmRuntime, uid: string, request: IncomingMessage, response: ServerResponse) => {
    const { provider } = runtime
    const realmName = runtime.realm.displayName
    let details: Awaited<ReturnType<typeof provider.interactionDetails>>
    try {
      details = await provider.interactionDetails(request, response)
    } catch {
      return send(response, 400, "text/html; charset=utf-8", messagePage("Sign-in expired", "This sign-in attempt has expired or was started in another browser. Go back to the application and sign in again."))
    }
    if (details.uid !== uid) {
      return send(response, 400, "text/html; charset=utf-8", messagePage("Sign-in expired", "This sign-in attempt does not match the one in progress. Go back to the application and sign in again."))
    }
    const clientId = String(details.params.client_id)
    const client = runtime.clients.get(clientId)
    const action = `${loginActionsPath(runtime.realm.realm)}/${uid}`
    const finish = async (accountId: string) => {
      const grant = details.grantId !== undefined
        ? (await provider.Grant.find(details.grantId)) ?? new provider.Grant({ accountId, clientId })
        : new provider.Grant({ accountId, clientId })
      // Keycloak's default: no consent screen; the realm's clients are trusted
      const scope = String(details.params.scope ?? "openid")
      grant.addOIDCScope(scope)
      grant.addResourceScope(runtime.issuer, scope)
      const grantId = await grant.save()
      await provider.interactionFinished(request, response, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false })
    }

    if (details.prompt.name !== "login") {
      // a signed-in user and a client without a grant yet
      return finish(details.session!.accountId)
    }
    if (request.method === "GET") {
      return send(response, 200, "text/html; charset=utf-8", loginPage({ realmName, clientName: client?.name ?? clientId, action }))
    }
    if (request.method !== "POST") return send(response, 405, "text/plain", "method not allowed\n", { allow: "GET, POST" })
    const form = await readForm(request)
    const username = form.get("username") ?? ""
    const password = form.get("password") ?? ""
    const user = findUser(runtime, username)
    // a user's name and email share one count
    const throttleKey = `${runtime.realm.realm}/${user?.username ?? username}`
    const wait = throttle.waitMs(throttleKey)
    if (wait > 0) {
      const error = `Too many failed sign-ins for this account. Try again in ${describeWait(wait)}.`
      return send(response, 429, "text/html; charset=utf-8", loginPage({ realmName, clientName: client?.name ?? clientId, action, username, error }), {
        "retry-after": String(Math.ceil(wait / 1000))
      })
    }
    const passwordOk = user?.passwordHash !== undefined ? await verifyPassword(password, user.passwordHash) : await dummyPasswordCheck(realmHashCosts.get(runtime.realm.realm))
    if (user === undefined || !passwordOk || !user.enabled) {
      if (!passwordOk) throttle.failed(throttleKey)
      if (throttle.waitMs(throttleKey) > 0) {
        options.log("warn", `realm ${runtime.realm.realm}: sign-ins for "${username.slice(0, 64)}" paused for ${describeWait(throttle.waitMs(throttleKey))} after repeated failures`)
      }
      options.log("info", `realm ${runtime.realm.realm}: failed sign-in for "${username.slice(0, 64)}" (${user === undefined ? "unknown user" : !user.enabled ? "user disabled" : "wrong password"})`)
      const error = user !== undefined && passwordOk && !user.enabled ? "Account is disabled, contact your administrator." : "Invalid username or password."
      return send(response, 401, "text/html; charset=utf-8", loginPage({ realmName, clientName: client?.name ?? clientId, action, username, error }))
    }
    throttle.succeeded(throttleKey)
    options.log("info", `realm ${runtime.realm.realm}: ${user.username} signed in for ${clientId}`)
    return finish(subjectOf(runtime.realm.realm, user.username))
  }

  // userinfo for the realm's JWT access tokens (oidc-provider refuses tokens that carry an audience)
  const userinfo = async (runtime: RealmRuntime, request: IncomingMessage, response: ServerResponse) => {
    const origin = request.headers.origin
    const cors = (clientId: string | undefined): Record<string, string> => {
      if (origin === undefined) return {}
      const client = clientId === undefined ? undefined : runtime.clients.get(clientId)
      const allowed = client === undefined
        ? [...runtime.clients.values()].some((candidate) => originAllowed(candidate, origin))
        : originAllowed(client, origin)
      return allowed ? { "access-control-allow-origin": origin, vary: "Origin" } : {}
    }
    if (request.method === "OPTIONS") {
      return send(response, 204, "text/plain", "", {
        ...cors(undefined),
        "access-control-allow-methods": "GET, POST",
        "access-control-allow-headers": "Authorization, Content-Type",
        "access-control-max-age": "600"
      })
    }
    const authorization = request.headers.authorization ?? ""
    const token = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1]
    const challenge = (error: string, description: string) =>
      sendJson(response, 401, { error, error_description: description }, {
        "www-authenticate": `Bearer realm="${runtime.realm.realm}", error="${error}", error_description="${description}"`,
        ...cors(undefined)
      })
    if (token === undefined) return challenge("invalid_request", "no bearer access token")
    try {
      const { payload } = await jwtVerify(token, publicKeys, { issuer: runtime.issuer, algorithms: ["RS256"], typ: "at+jwt", clockTolerance: 5 })
      const user = runtime.userBySubject(String(payload.sub))
      if (user === undefined || !user.enabled) return challenge("invalid_token", "user not found or disabled")
      const clientId = typeof payload.client_id === "string" ? payload.client_id : undefined
      const scopes = new Set(String(payload.scope ?? "").split(" "))
      if (!scopes.has("openid")) return sendJson(response, 403, { error: "insufficient_scope", error_description: "access token missing openid scope" }, cors(clientId))
      const all = accountClaims({ realm: runtime.realm.realm, user, client: clientId === undefined ? undefined : runtime.clients.get(clientId), use: "userinfo" })
      const claims: Record<string, unknown> = { sub: all.sub }
      const byScope: Record<string, ReadonlyArray<string>> = {
        profile: ["name", "given_name", "family_name", "preferred_username"],
        email: ["email", "email_verified"]
      }
      for (const [scope, names] of Object.entries(byScope)) {
        if (scopes.has(scope)) for (const name of names) if (all[name] !== undefined) claims[name] = all[name]
      }
      for (const [name, value] of Object.entries(all)) {
        if (!(name in claims) && !Object.values(byScope).some((names) => names.includes(name))) claims[name] = value
      }
      return sendJson(response, 200, claims, cors(clientId))
    } catch (error) {
      return challenge("invalid_token", `access token refused: ${(error as Error).message}`)
    }
  }

  return (request, response) => {
    const url = request.url
    if (url === undefined || !url.startsWith("/auth/realms/")) return false
    const rest = url.slice("/auth/realms/".length)
    const slash = rest.search(/[/?]/)
    const name = decodeURIComponent(slash === -1 ? rest : rest.slice(0, slash))
    const runtime = realms.get(name)
    if (runtime === undefined) {
      sendJson(response, 404, { error: "Realm does not exist" })
      return true
    }
    if (options.trustedProxies === undefined || !options.trustedProxies.allows(request.socket.remoteAddress)) stripForwarded(request)
    const prefix = realmPath(name)
    const relative = url.slice(prefix.length)
    const path = relative.split("?", 1)[0]
    const failed = (error: Error) => {
      options.log("warn", `realm ${name}: ${request.method} ${path} failed: ${error.message}`)
      if (!response.headersSent) send(response, 500, "text/plain; charset=utf-8", "internal error\n")
      else response.destroy(error)
    }
    if (path === "" || path === "/") {
      // Keycloak's realm description
      sendJson(response, 200, {
        realm: name,
        "token-service": `${runtime.issuer}/protocol/openid-connect`,
        "account-service": `${runtime.issuer}/account`,
        "tokens-not-before": 0
      })
      return true
    }
    const loginPrefix = "/login-actions/authenticate/"
    if (path.startsWith(loginPrefix)) {
      login(runtime, path.slice(loginPrefix.length), request, response).catch(failed)
      return true
    }
    if (path === userinfoRoute) {
      userinfo(runtime, request, response).catch(failed)
      return true
    }
    const mounted = request as IncomingMessage & { originalUrl?: string }
    mounted.originalUrl = url
    mounted.url = relative === "" ? "/" : relative
    callbacks.get(name)!(request, response)
    return true
  }
}
