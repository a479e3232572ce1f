// The gate's view of its identity provider: discovery (or the explicit endpoints when discovery is
// skipped), the JWKS (cached by jose, refetched on an unknown kid), code redemption and refresh
// with the client secret, and token validation with the messages oauth2-proxy users know.
import { createRemoteJWKSet, decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload } from "jose"
import type { GateOptions } from "./options.ts"

export interface ProviderEndpoints {
  readonly authorization: string
  readonly token: string
  readonly jwks: string
  readonly userinfo: string | undefined
  readonly endSession: string | undefined
}

export class TokenError extends Error {}

// asymmetric only: `none` and HS* (a public key used as an HMAC secret) are refused
export const allowedAlgorithms = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
const clockToleranceSeconds = 30
const fetchTimeoutMs = 10_000

export const issuerMismatch = (expected: string, got: unknown): string => `invalid issuer: expected ${expected}, got ${String(got)}`

const fetchJson = async (url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> => {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(fetchTimeoutMs), redirect: "error" })
  const text = await response.text()
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    throw new Error(`${url} answered ${response.status} with ${text.length === 0 ? "an empty body" : "a body that is not JSON"}`)
  }
  return { status: response.status, body }
}

/** the provider's endpoints: from discovery, whose issuer must equal the configured one exactly */
export const discoverProvider = async (options: GateOptions): Promise<ProviderEndpoints> => {
  if (options.skipOidcDiscovery) {
    return { authorization: options.loginUrl!, token: options.redeemUrl!, jwks: options.jwksUrl!, userinfo: options.profileUrl, endSession: undefined }
  }
  const url = `${options.issuerUrl.replace(/\/$/, "")}/.well-known/openid-configuration`
  const { status, body } = await fetchJson(url)
  if (status !== 200) throw new Error(`discovery at ${url} answered ${status}`)
  if (body.issuer !== options.issuerUrl) throw new TokenError(issuerMismatch(options.issuerUrl, body.issuer))
  const field = (name: string) => {
    const value = body[name]
    if (typeof value !== "string" || !URL.canParse(value)) throw new Error(`discovery at ${url}: ${name} is missing or not a URL`)
    return value
  }
  return {
    authorization: field("authorization_endpoint"),
    token: field("token_endpoint"),
    jwks: field("jwks_uri"),
    userinfo: typeof body.userinfo_endpoint === "string" ? body.userinfo_endpoint : options.profileUrl,
    endSession: typeof body.end_session_endpoint === "string" ? body.end_session_endpoint : undefined
  }
}

export interface TokenSet {
  readonly accessToken: string
  readonly idToken: string | undefined
  readonly refreshToken: string | undefined
  /** epoch ms */
  readonly expiresAt: number
}

/** the provider refused the grant (as opposed to being unreachable) */
export class GrantRefused extends Error {}

/** an unknown kid refetches the JWKS, at most once per cooldown (a stream of junk kids cannot hammer the provider) */
export const makeProviderClient = (options: GateOptions, endpoints: ProviderEndpoints, tuning: { readonly jwksCooldownMs?: number } = {}) => {
  const keys = createRemoteJWKSet(new URL(endpoints.jwks), { timeoutDuration: fetchTimeoutMs, cooldownDuration: tuning.jwksCooldownMs ?? 30_000 })
  const basic = "Basic " + Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`).toString("base64")

  const tokenRequest = async (params: Record<string, string>): Promise<TokenSet> => {
    const { status, body } = await fetchJson(endpoints.token, {
      method: "POST",
      headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams(params).toString()
    })
    if (status !== 200) {
      const reason = `${String(body.error ?? status)}${body.error_description === undefined ? "" : `: ${String(body.error_description)}`}`
      throw status === 400 || status === 401 ? new GrantRefused(`token endpoint refused: ${reason}`) : new Error(`token endpoint answered ${status}: ${reason}`)
    }
    if (typeof body.access_token !== "string") throw new Error("token endpoint answered without an access_token")
    const expiresIn = typeof body.expires_in === "number" ? body.expires_in : 300
    return {
      accessToken: body.access_token,
      idToken: typeof body.id_token === "string" ? body.id_token : undefined,
      refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : undefined,
      expiresAt: Date.now() + expiresIn * 1000
    }
  }

  /** signature, algorithm, time; then iss and aud checked here so the log says which and why */
  const verify = async (kind: "ID token" | "access token", token: string): Promise<JWTPayload> => {
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(token, keys, { algorithms: allowedAlgorithms, clockTolerance: clockToleranceSeconds }))
    } catch (error) {
      const message = error instanceof joseErrors.JWTExpired
        ? "expired"
        : error instanceof joseErrors.JWKSNoMatchingKey
        ? "signed with a key the provider does not publish"
        : error instanceof joseErrors.JOSEAlgNotAllowed || error instanceof joseErrors.JOSENotSupported
        ? `algorithm not allowed (${allowedAlgorithms.join(", ")})`
        : (error as Error).message
      throw new TokenError(`${kind} refused: ${message}`)
    }
    if (payload.iss !== options.issuerUrl) throw new TokenError(issuerMismatch(options.issuerUrl, payload.iss))
    const audiences = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud]
    if (!audiences.includes(options.clientId)) {
      throw new TokenError(
        `invalid audience: ${kind} aud [${audiences.join(" ")}] does not contain client id ${options.clientId}` +
          (kind === "access token" ? ` (add an audience mapper for ${options.clientId} to the client)` : "")
      )
    }
    return payload
  }

  const userinfo = async (accessToken: string): Promise<Record<string, unknown>> => {
    if (endpoints.userinfo === undefined) return {}
    const { status, body } = await fetchJson(endpoints.userinfo, { headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" } })
    if (status !== 200) throw new Error(`userinfo answered ${status}: ${String(body.error_description ?? body.error ?? "")}`)
    return body
  }

  return {
    endpoints,
    redeem: (code: string, redirectUri: string, codeVerifier: string | undefined) =>
      tokenRequest({
        grant_type: "authorization_code",
        code,
        redirect_uri: redirectUri,
        ...(codeVerifier === undefined ? {} : { code_verifier: codeVerifier })
      }),
    refresh: (refreshToken: string) => tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken }),
    verifyIdToken: (token: string, nonce: string | undefined) =>
      verify("ID token", token).then((payload) => {
        if (nonce !== undefined && payload.nonce !== nonce) throw new TokenError("ID token refused: nonce does not match the one sent")
        return payload
      }),
    verifyAccessToken: (token: string) => verify("access token", token),
    userinfo
  }
}

export type ProviderClient = ReturnType<typeof makeProviderClient>

/** a token's claims without verifying it (only for tokens already verified or for logging) */
export const peekClaims = (token: string): JWTPayload | undefined => {
  try {
    return decodeJwt(token)
  } catch {
    return undefined
  }
}
