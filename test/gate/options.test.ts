// The gate's settings under oauth2-proxy's names (flags, env, TOML file), the signed cookie ids,
// and the X-Auth-Request-* headers kept under the proxy buffer.
import t from "tap"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { identityHeaders } from "../../src/gate/GateHandler.ts"
import { identityOf, refusal } from "../../src/gate/identity.ts"
import { envName, GateConfigError, parseCookieSecret, readGateConfigFile, resolveGateOptions } from "../../src/gate/options.ts"
import { readCookie, signId, verifySignedId, type GateSession } from "../../src/gate/sessions.ts"
import { tempDir } from "../support/appliance.ts"

const secret = "0123456789abcdef0123456789abcdef"
const base = { "oidc-issuer-url": "https://sso.example.com/auth/realms/apps", "client-id": "gate", "client-secret": "s3cret" }

t.test("oauth2-proxy's names, defaults and env names", async (t) => {
  const options = resolveGateOptions(base, { cookieSecret: secret })
  t.equal(options.provider, "keycloak-oidc")
  t.equal(options.cookieName, "_oauth2_proxy")
  t.equal(options.cookieSecure, true, "cookie-secure defaults to true")
  t.equal(options.cookieExpireSeconds, 168 * 3600)
  t.same(options.emailDomains, ["*"])
  t.equal(options.codeChallengeMethod, "S256")
  t.equal(options.scope, "openid email profile")
  t.equal(envName("oidc-issuer-url"), "OAUTH2_PROXY_OIDC_ISSUER_URL")
  t.equal(envName("set-xauthrequest"), "OAUTH2_PROXY_SET_XAUTHREQUEST")
  const custom = resolveGateOptions({ ...base, "cookie-secure": "false", "cookie-expire": "30m", "whitelist-domain": ".example.com, .example.org:*", "allowed-group": "/ops" }, { cookieSecret: secret })
  t.equal(custom.cookieSecure, false)
  t.equal(custom.cookieExpireSeconds, 1800)
  t.same(custom.whitelistDomains, [".example.com", ".example.org:*"])
  t.same(custom.allowedGroups, ["/ops"])
})

t.test("oauth2-proxy's TOML config file", async (t) => {
  const file = join(tempDir(), "oauth2-proxy.cfg")
  writeFileSync(file, `provider = "keycloak-oidc"
oidc_issuer_url = "https://sso.example.com/auth/realms/apps"
client_id = "gate"
client_secret = "from-file"
email_domains = ["example.com"]
whitelist_domains = [".example.com"]
cookie_domains = [".example.com"]
set_xauthrequest = true
`)
  const settings = readGateConfigFile(file)
  t.same(settings["whitelist-domain"], [".example.com"])
  t.equal(settings["set-xauthrequest"], true)
  const options = resolveGateOptions({ ...settings, "client-secret": "from-flag" }, { cookieSecret: secret })
  t.equal(options.clientSecret, "from-flag", "a flag wins over the file")
  t.same(options.emailDomains, ["example.com"])
  t.same(options.cookieDomains, [".example.com"])
  writeFileSync(file, "client_id = [1, 2]\n")
  t.throws(() => readGateConfigFile(file), /client_id must be a string/)
})

t.test("settings that are wrong say which and why", async (t) => {
  t.throws(() => resolveGateOptions({ ...base, provider: "github" }, { cookieSecret: secret }), /--provider: "github" is not supported; use keycloak-oidc or oidc/)
  t.throws(() => resolveGateOptions({ ...base, "oidc-issuer-url": "sso.example.com" }, { cookieSecret: secret }), /--oidc-issuer-url: expected an http\(s\) URL/)
  t.throws(() => resolveGateOptions({ "client-id": "gate", "client-secret": "s" }, { cookieSecret: secret }), /--oidc-issuer-url is required/)
  t.throws(() => resolveGateOptions({ ...base, "client-secret": undefined }, { cookieSecret: secret }), /--client-secret or --client-secret-file is required/)
  t.throws(() => resolveGateOptions({ ...base, "cookie-secret": "short" }, { cookieSecret: secret }), /--cookie-secret: must be 16, 24 or 32 bytes/)
  t.throws(() => resolveGateOptions({ ...base, "cookie-secure": "maybe" }, { cookieSecret: secret }), /--cookie-secure: expected true or false/)
  t.throws(() => resolveGateOptions({ ...base, "skip-oidc-discovery": true }, { cookieSecret: secret }), /needs --login-url, --redeem-url and --oidc-jwks-url/)
  t.throws(() => resolveGateOptions({ ...base, "cookie-expire": "a week" }, { cookieSecret: secret }), /--cookie-expire: expected a duration/)
  t.ok(new GateConfigError("x") instanceof Error)
})

t.test("cookie secrets as oauth2-proxy takes them", async (t) => {
  t.equal(parseCookieSecret("0123456789abcdef").length, 16, "raw 16 bytes")
  const b64 = Buffer.alloc(32, 7).toString("base64url")
  t.same(parseCookieSecret(b64), Buffer.alloc(32, 7), "base64url of 32 bytes")
})

t.test("signed ids: any change is refused, and one purpose cannot stand in for another", async (t) => {
  const key = Buffer.from(secret)
  const value = signId(key, "session", "abc")
  t.equal(verifySignedId(key, "session", value), "abc")
  t.equal(verifySignedId(key, "csrf", value), undefined, "a csrf cookie is not a session cookie")
  t.equal(verifySignedId(Buffer.from("another-secret-of-32-bytes-long!"), "session", value), undefined, "another secret")
  t.equal(verifySignedId(key, "session", value.replace("abc", "abd")), undefined)
  t.equal(verifySignedId(key, "session", "abc"), undefined)
  t.equal(verifySignedId(key, "session", undefined), undefined)
  t.equal(readCookie("a=1; _oauth2_proxy=v.s; b=2", "_oauth2_proxy"), "v.s")
  t.equal(readCookie("x_oauth2_proxy=v", "_oauth2_proxy"), undefined)
})

t.test("identity from Keycloak's claims, and who is let in", async (t) => {
  const options = resolveGateOptions({ ...base, "email-domain": "example.com", "allowed-role": "developer,gate:operator" }, { cookieSecret: secret })
  const identity = identityOf(options,
    { sub: "u1", email: "a@example.com", preferred_username: "alice", groups: ["/ops"] },
    { realm_access: { roles: ["developer"] }, resource_access: { gate: { roles: ["operator"] } } })
  t.same(identity.groups, ["/ops", "role:developer", "role:gate:operator"])
  t.equal(refusal(options, identity), undefined)
  t.match(refusal(options, { ...identity, email: "a@evil.com" }), /email a@evil.com is not in --email-domain example.com/)
  t.match(refusal(options, { ...identity, groups: ["/ops"] }), /has none of --allowed-role developer,gate:operator/)
})

t.test("X-Auth-Request-* stay under the budget: groups cut, then the token left out", async (t) => {
  const options = resolveGateOptions({ ...base, "set-xauthrequest": true, "pass-access-token": true }, { cookieSecret: secret })
  const session: GateSession = {
    user: "u1", email: "a@example.com", preferredUsername: "alice",
    groups: Array.from({ length: 200 }, (_, i) => `/engineering-team-${i}`),
    accessToken: "t".repeat(1200), idToken: undefined, refreshToken: undefined,
    accessExpiresAt: 0, createdAt: 0, expiresAt: 0
  }
  const { headers, trimmed } = identityHeaders(options, session)
  const size = Object.entries(headers).reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0)
  t.ok(size <= options.authHeadersMaxBytes, `${size} bytes of headers`)
  t.equal(headers["x-auth-request-access-token"].length, 1200, "the token fits and is kept")
  t.ok(Number(headers["x-auth-request-groups-omitted"]) > 0)
  t.equal(headers["x-auth-request-groups"].split(",").length + Number(headers["x-auth-request-groups-omitted"]), 200, "kept + omitted = all")
  t.match(trimmed, /of 200 groups left out/)
  const huge = identityHeaders(options, { ...session, groups: [], accessToken: "t".repeat(5000) })
  t.notOk(huge.headers["x-auth-request-access-token"], "a token larger than the budget is left out")
  t.match(huge.trimmed, /access token \(5000 bytes\) left out/)
  const small = identityHeaders(options, { ...session, groups: ["/ops"] })
  t.equal(small.trimmed, undefined)
  t.equal(small.headers["x-auth-request-groups"], "/ops")
})
