// Flags of the embedded identity provider (LARDER_* env) and of the gate (oauth2-proxy's flag
// names, OAUTH2_PROXY_* env, and its TOML config file through --gate-config).
import { Config, Option } from "effect"
import { Flag } from "effect/cli"
import { optionalStringFlag } from "./envFlag.ts"
import { envName, gateSettingNames, type GateSettingName, type RawGateSettings } from "../../src/gate/options.ts"

const booleanSettings = new Set<GateSettingName>(["cookie-secure", "set-xauthrequest", "pass-access-token", "skip-provider-button", "skip-oidc-discovery"])

const describe: Partial<Record<GateSettingName, string>> = {
  provider: "Gate: keycloak-oidc (reads realm/client roles from the access token) or oidc",
  "oidc-issuer-url": "Gate: the issuer, exactly as in the tokens' iss (default: the embedded realm larder)",
  "client-id": "Gate: its client id at the provider",
  "client-secret": "Gate: its client secret (prefer --client-secret-file)",
  "client-secret-file": "Gate: file holding the client secret",
  "redirect-url": "Gate: the callback URL registered at the provider (default: <request origin>/oauth2/callback)",
  "email-domain": "Gate: comma-separated email domains let in, * for any",
  "cookie-secret": "Gate: 16, 24 or 32 bytes (or base64) signing the session cookie (default: generated into the data dir)",
  "cookie-secure": "Gate: mark the session cookie Secure",
  "cookie-domain": "Gate: comma-separated cookie domains, e.g. .example.com",
  "cookie-expire": "Gate: session lifetime, e.g. 168h",
  "whitelist-domain": "Gate: comma-separated domains post-login redirects may go to (.example.com: the domain and its subdomains; :* any port)",
  "set-xauthrequest": "Gate: answer /oauth2/auth with X-Auth-Request-User, -Email, -Preferred-Username, -Groups",
  "pass-access-token": "Gate: answer /oauth2/auth with X-Auth-Request-Access-Token",
  scope: "Gate: scopes requested",
  "code-challenge-method": "Gate: PKCE method (S256)",
  "allowed-group": "Gate: comma-separated groups, one of which is required",
  "allowed-role": "Gate: comma-separated realm roles (or client:role), one of which is required",
  "skip-provider-button": "Gate: /oauth2/sign_in goes straight to the provider",
  "user-id-claim": "Gate: claim for X-Auth-Request-User",
  "skip-oidc-discovery": "Gate: use --login-url, --redeem-url and --oidc-jwks-url instead of discovery",
  "login-url": "Gate: authorization endpoint (with --skip-oidc-discovery)",
  "redeem-url": "Gate: token endpoint (with --skip-oidc-discovery)",
  "oidc-jwks-url": "Gate: JWKS URL (with --skip-oidc-discovery)",
  "profile-url": "Gate: userinfo endpoint (with --skip-oidc-discovery)",
  "auth-headers-max-bytes": "Gate: X-Auth-Request-* headers stay under this many bytes (groups cut, token left out), so nginx's 4 KiB buffer never gives 502"
}

const gateFlag = (name: GateSettingName): Flag.Flag<Option.Option<string | boolean>> =>
  booleanSettings.has(name)
    ? Flag.Boolean(name).pipe(Flag.withDescription(describe[name] ?? name), Flag.withFallbackConfig(Config.Boolean(envName(name))), Flag.optional)
    : Flag.String(name).pipe(Flag.withDescription(describe[name] ?? name), Flag.withFallbackConfig(Config.String(envName(name))), Flag.optional)

export const gateFlags = Object.fromEntries(gateSettingNames.map((name) => [name, gateFlag(name)])) as Record<GateSettingName, Flag.Flag<Option.Option<string | boolean>>>

export const gateConfigFlag = optionalStringFlag("gate-config", "OAUTH2_PROXY_CONFIG", "oauth2-proxy's TOML config file (client_id = \"...\", whitelist_domains = [...]); flags and OAUTH2_PROXY_* win over it")

export const idpFlags = {
  externalUrl: optionalStringFlag("external-url", "LARDER_EXTERNAL_URL", "URL browsers reach the web listener at; the IdP's issuer is <external-url>/auth/realms/<realm> (default: the web listener's address)"),
  realmFiles: optionalStringFlag("idp-realm-file", "LARDER_IDP_REALM_FILES", "Comma-separated realm files (Keycloak realm-export JSON or YAML) for the embedded identity provider"),
  proxyHeaders: optionalStringFlag("proxy-headers", "KC_PROXY_HEADERS", "xforwarded: trust X-Forwarded-* from --trusted-proxies for the IdP's URLs (Keycloak's option; edge is accepted, deprecated)")
}

/** the gate's settings given on the command line or in OAUTH2_PROXY_* */
export const gateSettingsOf = (values: Record<GateSettingName, Option.Option<string | boolean>>): RawGateSettings => {
  const settings: Record<string, string | boolean> = {}
  for (const name of gateSettingNames) {
    const value = values[name]
    if (Option.isSome(value)) settings[name] = value.value
  }
  return settings
}
