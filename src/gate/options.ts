// The gate's settings under oauth2-proxy's names. Each comes from a flag (--client-id), else its
// OAUTH2_PROXY_* environment variable, else oauth2-proxy's TOML config file (client_id = "..."),
// else the default here. Values are validated once, with messages that name the setting.
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { parse as parseToml } from "smol-toml"

export const providerKinds = ["keycloak-oidc", "oidc"] as const
export type ProviderKind = (typeof providerKinds)[number]

export interface GateOptions {
  readonly provider: ProviderKind
  readonly issuerUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly redirectUrl: string | undefined
  readonly emailDomains: ReadonlyArray<string>
  readonly cookieName: string
  /** HMAC key for the cookie's signature */
  readonly cookieSecret: Buffer
  readonly cookieSecure: boolean
  readonly cookieDomains: ReadonlyArray<string>
  readonly cookieExpireSeconds: number
  readonly whitelistDomains: ReadonlyArray<string>
  readonly setXAuthRequest: boolean
  readonly passAccessToken: boolean
  readonly scope: string
  readonly codeChallengeMethod: "S256" | "plain" | undefined
  readonly allowedGroups: ReadonlyArray<string>
  readonly allowedRoles: ReadonlyArray<string>
  readonly skipProviderButton: boolean
  readonly userIdClaim: string
  readonly skipOidcDiscovery: boolean
  readonly loginUrl: string | undefined
  readonly redeemUrl: string | undefined
  readonly jwksUrl: string | undefined
  readonly profileUrl: string | undefined
  /** the X-Auth-Request-* headers of one /oauth2/auth answer stay under this (nginx's 4 KiB buffer) */
  readonly authHeadersMaxBytes: number
}

export class GateConfigError extends Error {}

/** the raw settings by oauth2-proxy flag name, each string or string list */
export type RawGateSettings = Readonly<Record<string, string | ReadonlyArray<string> | boolean | number | undefined>>

export const gateSettingNames = [
  "provider", "oidc-issuer-url", "client-id", "client-secret", "client-secret-file", "redirect-url", "email-domain",
  "cookie-name", "cookie-secret", "cookie-secure", "cookie-domain", "cookie-expire", "whitelist-domain", "set-xauthrequest",
  "pass-access-token", "scope", "code-challenge-method", "allowed-group", "allowed-role", "skip-provider-button",
  "user-id-claim", "skip-oidc-discovery", "login-url", "redeem-url", "oidc-jwks-url", "profile-url", "auth-headers-max-bytes"
] as const
export type GateSettingName = (typeof gateSettingNames)[number]

/** oauth2-proxy's env name for a flag: OAUTH2_PROXY_CLIENT_ID */
export const envName = (flag: string): string => `OAUTH2_PROXY_${flag.toUpperCase().replace(/-/g, "_")}`

// oauth2-proxy's config file uses snake_case and plural names for list settings
const fileKeys: Partial<Record<GateSettingName, string>> = {
  "email-domain": "email_domains",
  "cookie-domain": "cookie_domains",
  "whitelist-domain": "whitelist_domains",
  "allowed-group": "allowed_groups",
  "allowed-role": "allowed_roles"
}
const fileKey = (name: GateSettingName) => fileKeys[name] ?? name.replace(/-/g, "_")

/** reads oauth2-proxy's TOML config file into settings by flag name */
export const readGateConfigFile = (path: string): RawGateSettings => {
  let table: Record<string, unknown>
  try {
    table = parseToml(readFileSync(path, "utf8")) as Record<string, unknown>
  } catch (error) {
    throw new GateConfigError(`gate config file ${path}: ${(error as Error).message}`)
  }
  const settings: Record<string, string | ReadonlyArray<string> | boolean | number> = {}
  for (const name of gateSettingNames) {
    const value = table[fileKey(name)] ?? table[name.replace(/-/g, "_")]
    if (value === undefined) continue
    if (typeof value === "string" || typeof value === "boolean" || typeof value === "number") settings[name] = value
    else if (Array.isArray(value) && value.every((item) => typeof item === "string")) settings[name] = value as Array<string>
    else throw new GateConfigError(`gate config file ${path}: ${fileKey(name)} must be a string, boolean, number or list of strings`)
  }
  return settings
}

const list = (value: RawGateSettings[string]): ReadonlyArray<string> =>
  value === undefined ? [] : (Array.isArray(value) ? value : String(value).split(",")).map((item) => String(item).trim()).filter((item) => item !== "")

const bool = (name: string, value: RawGateSettings[string], fallback: boolean): boolean => {
  if (value === undefined) return fallback
  if (typeof value === "boolean") return value
  const text = String(value).toLowerCase()
  if (["true", "1", "yes"].includes(text)) return true
  if (["false", "0", "no"].includes(text)) return false
  throw new GateConfigError(`--${name}: expected true or false, got "${value}"`)
}

const url = (name: string, value: string): string => {
  const parsed = URL.parse(value)
  if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new GateConfigError(`--${name}: expected an http(s) URL, got "${value}"`)
  }
  return value
}

/** oauth2-proxy's durations: "168h", "30m", "3600s", or plain seconds */
const duration = (name: string, value: RawGateSettings[string], fallback: number): number => {
  if (value === undefined) return fallback
  if (typeof value === "number") return value
  const match = /^(\d+(?:\.\d+)?)(h|m|s)?$/.exec(String(value).trim())
  if (match === null) throw new GateConfigError(`--${name}: expected a duration like 168h, 30m or 3600s, got "${value}"`)
  return Number(match[1]) * (match[2] === "h" ? 3600 : match[2] === "m" ? 60 : 1)
}

/** oauth2-proxy's rule: 16, 24 or 32 bytes, given raw or base64(url) */
export const parseCookieSecret = (secret: string): Buffer => {
  const raw = Buffer.from(secret, "utf8")
  if ([16, 24, 32].includes(raw.length)) return raw
  const decoded = Buffer.from(secret.replace(/-/g, "+").replace(/_/g, "/"), "base64")
  if ([16, 24, 32].includes(decoded.length)) return decoded
  throw new GateConfigError(
    `--cookie-secret: must be 16, 24 or 32 bytes, or their base64 (got ${raw.length} bytes); generate one with: openssl rand -base64 32 | tr -- '+/' '-_'`
  )
}

export interface GateDefaults {
  readonly issuerUrl?: string | undefined
  readonly clientId?: string | undefined
  readonly clientSecret?: string | undefined
  /** used when no --cookie-secret is set: a secret generated once into the data directory */
  readonly cookieSecret: string
}

export const resolveGateOptions = (settings: RawGateSettings, defaults: GateDefaults): GateOptions => {
  const text = (name: GateSettingName): string | undefined => {
    const value = settings[name]
    return value === undefined ? undefined : Array.isArray(value) ? value.join(",") : String(value)
  }
  const provider = text("provider") ?? "keycloak-oidc"
  if (!(providerKinds as ReadonlyArray<string>).includes(provider)) {
    throw new GateConfigError(`--provider: "${provider}" is not supported; use ${providerKinds.join(" or ")}`)
  }
  const issuerUrl = text("oidc-issuer-url") ?? defaults.issuerUrl
  if (issuerUrl === undefined) throw new GateConfigError("--oidc-issuer-url is required (the identity provider's issuer, e.g. https://sso.example.com/auth/realms/apps)")
  const clientId = text("client-id") ?? defaults.clientId
  if (clientId === undefined) throw new GateConfigError("--client-id is required")
  const secretFile = text("client-secret-file")
  let clientSecret = text("client-secret")
  if (clientSecret === undefined && secretFile !== undefined) {
    try {
      clientSecret = readFileSync(secretFile, "utf8").trim()
    } catch (error) {
      throw new GateConfigError(`--client-secret-file: ${(error as Error).message}`)
    }
  }
  clientSecret ??= defaults.clientSecret
  if (clientSecret === undefined || clientSecret === "") throw new GateConfigError("--client-secret or --client-secret-file is required (the gate is a confidential client)")
  const method = text("code-challenge-method") ?? "S256"
  if (method !== "S256" && method !== "plain" && method !== "") throw new GateConfigError(`--code-challenge-method: expected S256 or plain, got "${method}"`)
  const skipOidcDiscovery = bool("skip-oidc-discovery", settings["skip-oidc-discovery"], false)
  const endpoint = (name: GateSettingName) => {
    const value = text(name)
    return value === undefined ? undefined : url(name, value)
  }
  const options: GateOptions = {
    provider: provider as ProviderKind,
    issuerUrl: url("oidc-issuer-url", issuerUrl),
    clientId,
    clientSecret,
    redirectUrl: endpoint("redirect-url"),
    emailDomains: list(settings["email-domain"]).length === 0 ? ["*"] : list(settings["email-domain"]),
    cookieName: text("cookie-name") ?? "_oauth2_proxy",
    cookieSecret: parseCookieSecret(text("cookie-secret") ?? defaults.cookieSecret),
    cookieSecure: bool("cookie-secure", settings["cookie-secure"], true),
    cookieDomains: list(settings["cookie-domain"]),
    cookieExpireSeconds: duration("cookie-expire", settings["cookie-expire"], 168 * 3600),
    whitelistDomains: list(settings["whitelist-domain"]),
    setXAuthRequest: bool("set-xauthrequest", settings["set-xauthrequest"], false),
    passAccessToken: bool("pass-access-token", settings["pass-access-token"], false),
    scope: text("scope") ?? "openid email profile",
    codeChallengeMethod: method === "" ? undefined : method,
    allowedGroups: list(settings["allowed-group"]),
    allowedRoles: list(settings["allowed-role"]),
    skipProviderButton: bool("skip-provider-button", settings["skip-provider-button"], false),
    userIdClaim: text("user-id-claim") ?? "sub",
    skipOidcDiscovery,
    loginUrl: endpoint("login-url"),
    redeemUrl: endpoint("redeem-url"),
    jwksUrl: endpoint("oidc-jwks-url"),
    profileUrl: endpoint("profile-url"),
    authHeadersMaxBytes: Number(text("auth-headers-max-bytes") ?? 3072)
  }
  if (skipOidcDiscovery && (options.loginUrl === undefined || options.redeemUrl === undefined || options.jwksUrl === undefined)) {
    throw new GateConfigError("--skip-oidc-discovery needs --login-url, --redeem-url and --oidc-jwks-url")
  }
  if (!Number.isInteger(options.authHeadersMaxBytes) || options.authHeadersMaxBytes < 512) {
    throw new GateConfigError(`--auth-headers-max-bytes: expected an integer of at least 512, got "${text("auth-headers-max-bytes")}"`)
  }
  return options
}

/** a short fingerprint of a secret for logs: shows which one is in use without showing it */
export const fingerprint = (secret: string | Buffer): string => createHash("sha256").update(secret).digest("hex").slice(0, 8)
