// --proxy-headers xforwarded (Keycloak's option): behind a trusted proxy the provider's endpoint
// URLs follow X-Forwarded-Host/-Proto while the issuer stays the one canonical external URL;
// headers from sources outside --trusted-proxies are ignored; `edge` still works, with a warning.
import t from "tap"
import { startAppliance } from "../support/appliance.ts"

const discovery = async (webUrl: string, headers: Record<string, string> = {}) =>
  await (await fetch(`${webUrl}/auth/realms/larder/.well-known/openid-configuration`, { headers })).json() as Record<string, string>

const forwarded = { "x-forwarded-host": "sso.example.test", "x-forwarded-proto": "https" }

t.test("xforwarded from a trusted proxy: endpoints follow the proxy, the issuer does not", async (t) => {
  const larder = await startAppliance({ args: ["--external-url", "https://sso.example.test", "--proxy-headers", "xforwarded"] })
  t.teardown(() => larder.stop())
  const behind = await discovery(larder.webUrl, forwarded)
  t.equal(behind.issuer, "https://sso.example.test/auth/realms/larder", "issuer: --external-url + /auth/realms/<realm>")
  t.equal(behind.authorization_endpoint, "https://sso.example.test/auth/realms/larder/protocol/openid-connect/auth")
  const direct = await discovery(larder.webUrl)
  t.equal(direct.issuer, "https://sso.example.test/auth/realms/larder", "the same issuer however the provider is reached")
  t.equal(direct.authorization_endpoint, `${larder.webUrl}/auth/realms/larder/protocol/openid-connect/auth`)
})

t.test("forwarded headers from an untrusted source, or without xforwarded, are ignored", async (t) => {
  const untrusted = await startAppliance({ args: ["--proxy-headers", "xforwarded", "--trusted-proxies", "10.0.0.0/8"] })
  t.teardown(() => untrusted.stop())
  t.equal((await discovery(untrusted.webUrl, forwarded)).authorization_endpoint, `${untrusted.webUrl}/auth/realms/larder/protocol/openid-connect/auth`)
  const off = await startAppliance({})
  t.teardown(() => off.stop())
  t.equal((await discovery(off.webUrl, forwarded)).authorization_endpoint, `${off.webUrl}/auth/realms/larder/protocol/openid-connect/auth`)
})

t.test("edge is accepted with a deprecation warning", async (t) => {
  const larder = await startAppliance({ args: ["--proxy-headers", "edge"] })
  t.teardown(() => larder.stop())
  t.match(larder.output(), /--proxy-headers edge is deprecated \(as in Keycloak 26\); it is read as xforwarded/)
  t.equal((await discovery(larder.webUrl, forwarded)).authorization_endpoint, "https://sso.example.test/auth/realms/larder/protocol/openid-connect/auth")
})
