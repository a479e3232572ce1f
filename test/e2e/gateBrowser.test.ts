// Acceptance 1 and 2 of the gate: headless chromium (Debian's, driven by playwright-core) opens an
// app behind nginx's auth_request, is sent to the embedded provider's login page, signs in and
// lands on the page it asked for with the identity headers; a user in 200 groups gets no 502.
import t from "tap"
import { chromium, type Browser } from "playwright-core"
import { startGateStack, waitForGate, type GateStack } from "../support/gateStack.ts"

const chromiumPath = "/usr/bin/chromium"

let stack: GateStack
let browser: Browser

t.before(async () => {
  stack = await startGateStack()
  await waitForGate(stack.larder.webUrl)
  browser = await chromium.launch({
    executablePath: chromiumPath,
    // root in CI: chromium's sandbox needs user namespaces it may not have
    args: ["--no-sandbox", "--host-resolver-rules=MAP *.example.test 127.0.0.1"]
  })
})

t.teardown(async () => {
  await browser?.close()
  await stack?.stop()
})

const echoed = async (text: string) => JSON.parse(text) as { path: string; headers: Record<string, string> }

t.test("a browser is sent to the login page, signs in and lands on the page it asked for", async (t) => {
  const context = await browser.newContext()
  const page = await context.newPage()
  const wanted = `${stack.appUrl}/reports/2026?view=full`
  await page.goto(wanted)
  t.match(page.url(), `${stack.issuer}/login-actions/authenticate/`, "the unauthenticated request ends on the provider's login page")
  t.equal(await page.getByRole("heading", { level: 1 }).textContent(), "Sign in to Test Apps")
  await page.getByLabel("Username or email").fill("alice")
  await page.getByLabel("Password").fill("alice-password")
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForURL(wanted)
  t.equal(page.url(), wanted, "back on the original URL, query included")
  const seen = await echoed(await page.locator("#headers").textContent() ?? "{}")
  t.equal(seen.path, "/reports/2026?view=full")
  t.equal(seen.headers["x-auth-request-email"], "alice@example.test")
  t.equal(seen.headers["x-auth-request-preferred-username"], "alice")
  t.match(seen.headers["x-auth-request-user"], /^[0-9a-f]{8}-[0-9a-f]{4}-/, "the subject")
  const groups = seen.headers["x-auth-request-groups"].split(",")
  t.ok(groups.includes("/platform/oncall"), "group path from the group mapper")
  t.ok(groups.includes("role:viewer") && groups.includes("role:developer"), "realm roles, direct and inherited from /platform")
  t.ok(groups.includes("role:gate:operator"), "client role from the subgroup")
  t.match(seen.headers["x-auth-request-access-token"], /^ey[\w-]+\.[\w-]+\.[\w-]+$/, "the access token reaches the app")

  const cookies = await context.cookies()
  const session = cookies.find((cookie) => cookie.name === "_oauth2_proxy")
  t.ok(session, "session cookie set")
  t.equal(session?.domain, ".example.test", "on the parent domain")
  t.equal(session?.httpOnly, true)
  t.equal(session?.sameSite, "Lax")
  t.ok((session?.value.length ?? 0) < 200, `the cookie holds only a signed id (${session?.value.length} bytes)`)

  // a second visit passes straight through
  const again = await page.goto(`${stack.appUrl}/second`)
  t.equal(again?.status(), 200)
  t.equal((await echoed(await page.locator("#headers").textContent() ?? "{}")).headers["x-auth-request-preferred-username"], "alice")
  await context.close()
})

t.test("a user in 200 groups signs in through nginx's default buffers without a 502", async (t) => {
  const context = await browser.newContext()
  const page = await context.newPage()
  const statuses: Array<number> = []
  page.on("response", (response) => statuses.push(response.status()))
  await page.goto(`${stack.appUrl}/big`)
  await page.getByLabel("Username or email").fill("crowd")
  await page.getByLabel("Password").fill("crowd-password")
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForURL(`${stack.appUrl}/big`)
  // without the header budget nginx logs "upstream sent too big header" and answers 500 (502 on a proxied callback)
  t.notOk(statuses.some((status) => status >= 500), `no 5xx on the way (${statuses.join(" ")})`)
  const seen = await echoed(await page.locator("#headers").textContent() ?? "{}")
  t.equal(seen.headers["x-auth-request-preferred-username"], "crowd")
  const groups = seen.headers["x-auth-request-groups"].split(",")
  t.ok(groups.length > 50 && groups.every((group) => /^\/engineering-team-\d{3}$/.test(group)), `as many groups as fit (${groups.length})`)
  t.match(stack.larder.output(), /auth headers for crowd kept under --auth-headers-max-bytes 3072: \d+ of 200 groups left out/)
  await context.close()
})
