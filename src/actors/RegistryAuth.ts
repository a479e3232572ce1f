// Bearer tokens for an upstream registry: a 401 challenge sends us to the token endpoint
// (anonymously, or with the repository's credentials), and the token is reused for its scope
// until shortly before it expires.
import { Effect } from "effect"
import { parseBearerChallenge, tokenUrl } from "../protocols/oci/challenge.ts"
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from "./UpstreamClient.ts"
import { UpstreamUnreachable } from "./UpstreamClient.ts"

export interface Credentials {
  readonly username: string
  readonly password: string
}

// Tokens are reused until this long before they expire.
const expiryMarginMs = 30_000

const readJson = async (response: UpstreamResponse): Promise<unknown> => {
  let text = ""
  for await (const chunk of response.body) {
    text += chunk
    if (text.length > 1_000_000) throw new Error("token response too large")
  }
  return JSON.parse(text)
}

export const makeRegistryAuth = (client: UpstreamClient["Service"], credentials: Credentials | undefined) => {
  const tokens = new Map<string, { readonly token: string; readonly expiresAt: number }>()

  const fetchToken = (url: string) =>
    Effect.gen(function*() {
      const headers: Record<string, string> = {}
      if (credentials !== undefined) {
        headers.authorization = "Basic " + Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")
      }
      const response = yield* client.request({ url, headers })
      if (response.status !== 200) {
        response.body.resume()
        return yield* new UpstreamUnreachable({ url, message: `token endpoint answered ${response.status}` })
      }
      const body = yield* Effect.tryPromise({
        try: () => readJson(response),
        catch: (cause) => new UpstreamUnreachable({ url, message: `token endpoint sent no JSON: ${cause}` })
      })
      const { token, access_token, expires_in } = body as { token?: string; access_token?: string; expires_in?: number }
      const value = token ?? access_token
      if (typeof value !== "string") return yield* new UpstreamUnreachable({ url, message: "token endpoint sent no token" })
      return { token: value, expiresAt: Date.now() + (typeof expires_in === "number" ? expires_in : 60) * 1000 }
    })

  /** sends the request with the scope's token; on a Bearer challenge fetches one and retries once */
  const request = (upstream: UpstreamRequest, scope: string | undefined) =>
    Effect.gen(function*() {
      const cached = scope === undefined ? undefined : tokens.get(scope)
      const withToken = (token: string) => ({ ...upstream, headers: { ...upstream.headers, authorization: `Bearer ${token}` } })
      const first = yield* client.request(
        cached !== undefined && cached.expiresAt - expiryMarginMs > Date.now() ? withToken(cached.token) : upstream
      )
      const challenge = first.status === 401 ? parseBearerChallenge(first.headers["www-authenticate"] as string | undefined) : undefined
      if (challenge === undefined) return first
      first.body.resume()
      const fresh = yield* fetchToken(tokenUrl(challenge, scope))
      tokens.set(challenge.scope ?? scope ?? "", fresh)
      return yield* client.request(withToken(fresh.token))
    })

  return { request }
}
