// OIDC for the SBOM intake, configured with Dependency-Track's ALPINE_OIDC_* settings: discovery of
// the issuer (its outcome is reported, unlike Dependency-Track whose "available" flag stays true
// while a missing CA makes discovery fail), and ID tokens verified against the issuer's JWKS.
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from "jose"
import { allowedAlgorithms, issuerMismatch } from "../gate/provider.ts"

export interface SbomOidcOptions {
  readonly enabled: boolean
  readonly clientId: string
  readonly issuer: string
  readonly usernameClaim: string
  readonly userProvisioning: boolean
  readonly teamsProvisioning: boolean
  readonly teamsDefault: ReadonlyArray<string>
  readonly teamsClaim: string
  /** the button's text: "Sign in with <name>" */
  readonly displayName: string
}

export interface DiscoveryStatus {
  readonly ok: boolean
  readonly error: string | undefined
  readonly checkedAt: number | undefined
}

const tlsCodes = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN", "DEPTH_ZERO_SELF_SIGNED_CERT", "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "CERT_HAS_EXPIRED", "ERR_TLS_CERT_ALTNAME_INVALID", "CERT_UNTRUSTED"
])

/** why a fetch failed, with the cause undici hides; a TLS trust failure says how to fix it */
export const fetchFailure = (error: unknown): string => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  const code = cause?.code
  if (code !== undefined && tlsCodes.has(code)) {
    return `TLS: ${cause!.message} (${code}); the issuer's certificate is not signed by a CA larder trusts. ` +
      "Add the CA with NODE_EXTRA_CA_CERTS=/path/ca.pem or --ca-file (Dependency-Track's equivalent failure is \"PKIX path building failed\")"
  }
  return cause?.message !== undefined ? `${(error as Error).message}: ${cause.message}${code === undefined ? "" : ` (${code})`}` : (error as Error).message
}

export class OidcLoginError extends Error {}

export const makeSbomOidc = (options: SbomOidcOptions, log: (level: "info" | "warn", message: string) => void) => {
  let status: DiscoveryStatus = { ok: false, error: "discovery has not run yet", checkedAt: undefined }
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined
  let running: Promise<void> | undefined

  const discover = (): Promise<void> => {
    running ??= (async () => {
      const url = `${options.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: "error" })
        if (response.status !== 200) throw new Error(`${url} answered ${response.status}`)
        const document = await response.json() as Record<string, unknown>
        if (document.issuer !== options.issuer) throw new Error(issuerMismatch(options.issuer, document.issuer))
        if (typeof document.jwks_uri !== "string") throw new Error(`${url} names no jwks_uri`)
        keys = createRemoteJWKSet(new URL(document.jwks_uri), { timeoutDuration: 10_000 })
        status = { ok: true, error: undefined, checkedAt: Date.now() }
        log("info", `SBOM OIDC: discovery of ${options.issuer} succeeded (client ${options.clientId})`)
      } catch (error) {
        status = { ok: false, error: fetchFailure(error), checkedAt: Date.now() }
        log("warn", `SBOM OIDC: discovery of ${options.issuer} failed: ${status.error}. The login page says so; sign-in with OIDC is unavailable until it succeeds`)
      } finally {
        running = undefined
      }
    })()
    return running
  }

  /** the claims of a valid ID token for this client */
  const verifyIdToken = async (token: string): Promise<JWTPayload> => {
    // a failed discovery is retried at most every 10 s, when someone tries to sign in
    if (!status.ok && (status.checkedAt === undefined || Date.now() - status.checkedAt > 10_000)) await discover()
    if (!status.ok || keys === undefined) throw new OidcLoginError(`OIDC is unavailable: ${status.error}`)
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(token, keys, { algorithms: allowedAlgorithms, clockTolerance: 30 }))
    } catch (error) {
      throw new OidcLoginError(`ID token refused: ${error instanceof joseErrors.JWTExpired ? "expired" : (error as Error).message}`)
    }
    if (payload.iss !== options.issuer) throw new OidcLoginError(issuerMismatch(options.issuer, payload.iss))
    const audiences = Array.isArray(payload.aud) ? payload.aud : payload.aud === undefined ? [] : [payload.aud]
    if (!audiences.includes(options.clientId)) throw new OidcLoginError(`invalid audience: ID token aud [${audiences.join(" ")}] does not contain client id ${options.clientId}`)
    return payload
  }

  return { options, discover, status: () => status, verifyIdToken }
}

export type SbomOidc = ReturnType<typeof makeSbomOidc>
