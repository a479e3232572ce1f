// The gate's sessions over time: tokens close to expiry are refreshed with the refresh token (once
// for concurrent requests), sessions survive a restart (they live in the index), and a provider
// that refuses the refresh (the user was disabled) ends the session.
import t from "tap"
import { writeFileSync } from "node:fs"
import { startAppliance, type Appliance } from "../support/appliance.ts"
import { makeBrowserless } from "../support/browserless.ts"
import { waitForGate } from "../support/gateStack.ts"
import { freePort } from "../support/ports.ts"
import { gateSecret, testRealm, writeRealmFile } from "../support/realm.ts"

t.test("refresh before expiry, restart, and the end of a session the provider refuses", async (t) => {
  const port = await freePort()
  const external = `http://127.0.0.1:${port}`
  // access tokens live 20 s: inside the gate's 30 s margin, so every check refreshes
  const realm = { ...testRealm({ gateRedirects: [`${external}/oauth2/callback`] }), accessTokenLifespan: 20 }
  const realmFile = writeRealmFile(realm)
  const args = [
    "--external-url", external, "--idp-realm-file", realmFile,
    "--client-id", "gate", "--client-secret", gateSecret, "--oidc-issuer-url", `${external}/auth/realms/apps`,
    "--set-xauthrequest", "--pass-access-token"
  ]
  let larder: Appliance = await startAppliance({ webPort: port, args })
  t.teardown(() => larder.stop())
  await waitForGate(larder.webUrl)

  const browser = makeBrowserless()
  const login = await browser.follow(`${larder.webUrl}/oauth2/start?rd=/`)
  const hops = await browser.submitLogin(login.at(-1)!, "alice", "alice-password")
  const callback = hops.find((hop) => hop.url.includes("/oauth2/callback"))
  t.match(String(callback?.headers["set-cookie"]), /_oauth2_proxy=[^;]+; Path=\/; Max-Age=604800; HttpOnly; Secure; SameSite=Lax/, "cookie-secure defaults to true, as in oauth2-proxy")
  const token = async () => {
    const answer = await browser.send(`${larder.webUrl}/oauth2/auth`)
    t.equal(answer.status, 200)
    return String(answer.headers["x-auth-request-access-token"])
  }
  const concurrent = await Promise.all(Array.from({ length: 8 }, token))
  t.equal(new Set(concurrent).size, 1, "eight concurrent checks share one refresh")
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const later = await token()
  t.not(later, concurrent[0], "a later check carries a fresh access token")
  const claims = JSON.parse(Buffer.from(later.split(".")[1], "base64url").toString())
  t.ok(claims.exp - claims.iat === 20, "issued with the realm's accessTokenLifespan")

  // sessions are in the index: a restart keeps them
  await larder.stop()
  larder = await startAppliance({ dataDir: larder.dataDir, webPort: port, args })
  await waitForGate(larder.webUrl)
  t.equal((await browser.send(`${larder.webUrl}/oauth2/auth`)).status, 200, "the session survived the restart")

  // the administrator disables alice: the next refresh is refused and the session ends
  await larder.stop()
  writeFileSync(realmFile, JSON.stringify({ ...realm, users: realm.users.map((user) => user.username === "alice" ? { ...user, enabled: false } : user) }))
  larder = await startAppliance({ dataDir: larder.dataDir, webPort: port, args })
  await waitForGate(larder.webUrl)
  t.equal((await browser.send(`${larder.webUrl}/oauth2/auth`)).status, 401, "the provider refused the refresh: 401")
  t.match(larder.output(), /session of alice ended: refresh refused: token endpoint refused: invalid_grant/)
  t.equal((await browser.send(`${larder.webUrl}/oauth2/auth`)).status, 401, "and the session is gone, not retried")
})
