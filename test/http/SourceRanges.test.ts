import t from "tap"
import { defaultLanSourceRanges, normaliseAddress, parseSourceRanges } from "../../src/http/SourceRanges.ts"

const cases = [
  [["127.0.0.1/32"], "127.0.0.1", true],
  [["127.0.0.1/32"], "127.0.0.2", false],
  [["127.0.0.1/32"], "::ffff:127.0.0.1", true],
  [["127.0.0.1/32"], "::ffff:127.0.0.2", false],
  [["127.0.0.0/8"], "::ffff:127.0.0.2", true],
  [["10.1.2.3"], "10.1.2.3", true],
  [["10.1.2.3"], "10.1.2.4", false],
  [["::1/128"], "::1", true],
  [["::1/128"], "127.0.0.1", false],
  [["fd00::/8"], "fd12:3456::1", true],
  [["fd00::/8"], "fe80::1", false],
  [["192.168.0.0/16", "::1/128"], "192.168.44.5", true],
  [[], "127.0.0.1", false]
] as const
for (const [ranges, address, allowed] of cases) {
  t.equal(parseSourceRanges(ranges).allows(address), allowed, `${ranges.join(",") || "(none)"} ${allowed ? "admits" : "refuses"} ${address}`)
}

t.equal(parseSourceRanges(["127.0.0.0/8"]).allows(undefined), false, "an unknown source is refused")
const lan = parseSourceRanges(defaultLanSourceRanges)
t.ok(lan.allows("192.168.1.5"), "the default ranges admit private addresses")
t.ok(lan.allows("::ffff:10.0.0.7"))
t.notOk(lan.allows("8.8.8.8"), "and refuse public ones")
t.notOk(lan.allows("2001:db8::1"))
t.equal(normaliseAddress("::FFFF:10.0.0.1"), "10.0.0.1")
t.equal(normaliseAddress("::1"), "::1")
for (const bad of ["10.0.0.0/33", "::/129", "not-an-ip/8", "10.0.0.0/x", "1.2.3/24"]) {
  t.throws(() => parseSourceRanges([bad]), { message: new RegExp(`invalid source range "${bad.replace(/[./]/g, "\\$&")}"`) }, bad)
}
