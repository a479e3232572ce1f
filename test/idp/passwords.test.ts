import { pbkdf2Sync, randomBytes } from "node:crypto"
import t from "tap"
import { commonHashCost, dummyPasswordCheck, hashPassword, storedHashProblem, verifyPassword } from "../../src/idp/passwords.ts"

t.test("checks run off the event loop: timers keep firing during a burst of sign-ins", async (t) => {
  const stored = hashPassword("right")
  let ticks = 0
  let longestGap = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    longestGap = Math.max(longestGap, now - last)
    last = now
    ticks++
  }, 1)
  const results = await Promise.all([
    ...Array.from({ length: 6 }, (_, i) => verifyPassword(i % 2 === 0 ? "right" : "wrong", stored)),
    dummyPasswordCheck()
  ])
  clearInterval(timer)
  t.same(results, [true, false, true, false, true, false, false], "every check answers its own password")
  // seven scrypt checks are several hundred ms of CPU; had they run on the loop, the timer would not have run in between
  t.ok(ticks >= 5, `the timer ran ${ticks} times during the checks (longest gap ${longestGap.toFixed(0)} ms)`)
})

t.test("stored strings larder cannot check are named, not thrown", async (t) => {
  t.equal(storedHashProblem(hashPassword("x")), undefined)
  t.match(storedHashProblem("scrypt$N=3,r=8,p=1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA=="), /unusable scrypt parameters/)
  t.match(storedHashProblem("md5$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA=="), /unknown hash scheme "md5"/)
  t.equal(await verifyPassword("x", "md5$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA=="), false)
})

t.test("unknown names cost what the realm's own checks cost", async (t) => {
  // as a Keycloak import has them: pbkdf2-sha256, 27500 iterations, 64-byte hashes
  const keycloak = (password: string) => {
    const salt = randomBytes(16)
    return `pbkdf2-sha256$27500$${salt.toString("base64")}$${pbkdf2Sync(password, salt, 27500, 64, "sha256").toString("base64")}`
  }
  const stored = [keycloak("a"), keycloak("b"), hashPassword("c"), "not a hash"]
  t.ok(await verifyPassword("a", stored[0]), "the Keycloak hash checks")
  const common = commonHashCost(stored)!
  t.equal(common.cost, "pbkdf2-sha256$27500", "the most common scheme and parameters")
  t.match(common.dummy, { kind: "pbkdf2", digest: "sha256", iterations: 27500 })
  t.equal(common.dummy.hash.length, 64, "as long as the real hashes")
  t.equal(await dummyPasswordCheck(common), false)
  t.equal(commonHashCost([]), undefined, "no users: hashPassword's cost is used")
  t.equal(commonHashCost(["not a hash"]), undefined)
})
