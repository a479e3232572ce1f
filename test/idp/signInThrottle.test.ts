import t from "tap"
import { describeWait, makeSignInThrottle } from "../../src/idp/signInThrottle.ts"

const clock = () => {
  let now = 1_000_000
  return { now: () => now, advance: (ms: number) => void (now += ms) }
}

t.test("five free failures, then a wait that doubles up to the cap", async (t) => {
  const time = clock()
  const throttle = makeSignInThrottle({ now: time.now })
  for (let i = 0; i < 4; i++) throttle.failed("alice")
  t.equal(throttle.waitMs("alice"), 0, "four failures: no wait")
  throttle.failed("alice")
  t.equal(throttle.waitMs("alice"), 30_000, "the fifth failure: 30 s")
  time.advance(10_000)
  t.equal(throttle.waitMs("alice"), 20_000, "the wait counts down")
  time.advance(20_000)
  t.equal(throttle.waitMs("alice"), 0, "and ends")
  throttle.failed("alice")
  t.equal(throttle.waitMs("alice"), 60_000, "the sixth: 60 s")
  for (let i = 0; i < 10; i++) throttle.failed("alice")
  t.equal(throttle.waitMs("alice"), 15 * 60_000, "capped at 15 minutes")
})

t.test("names are counted apart, whatever their case; a success clears the count", async (t) => {
  const time = clock()
  const throttle = makeSignInThrottle({ now: time.now })
  for (let i = 0; i < 5; i++) throttle.failed("Bob ")
  t.ok(throttle.waitMs("bob") > 0, "trimmed and lower-cased")
  t.equal(throttle.waitMs("carol"), 0, "another name is not affected")
  throttle.succeeded("BOB")
  t.equal(throttle.waitMs("bob"), 0)
  throttle.failed("bob")
  t.equal(throttle.waitMs("bob"), 0, "counting starts over")
})

t.test("a name without failures for the forget period starts over", async (t) => {
  const time = clock()
  const throttle = makeSignInThrottle({ now: time.now, forgetAfterMs: 60_000 })
  for (let i = 0; i < 5; i++) throttle.failed("dana")
  time.advance(61_000)
  throttle.failed("dana")
  t.equal(throttle.waitMs("dana"), 0, "one failure in a fresh count")
})

t.test("memory is bounded: the oldest failing name is forgotten first", async (t) => {
  const time = clock()
  const throttle = makeSignInThrottle({ now: time.now, limit: 3 })
  for (const name of ["a", "b", "c"]) for (let i = 0; i < 5; i++) throttle.failed(name)
  for (let i = 0; i < 5; i++) throttle.failed("a") // a is now the newest
  throttle.failed("d")
  t.ok(throttle.waitMs("a") > 0, "a, failing again, was kept")
  t.equal(throttle.waitMs("b"), 0, "b, the oldest, was forgotten")
  t.ok(throttle.waitMs("c") > 0)
})

t.test("waits read as people say them", async (t) => {
  t.equal(describeWait(1), "1 second")
  t.equal(describeWait(30_000), "30 seconds")
  t.equal(describeWait(60_000), "1 minute")
  t.equal(describeWait(61_000), "2 minutes")
  t.equal(describeWait(15 * 60_000), "15 minutes")
})
