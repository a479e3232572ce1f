// Source ranges for the LAN listener. Addresses here are only strings given to a function.
import t from "tap"
import { defaultLanSourceRanges, normaliseAddress, parseSourceRanges } from "../../src/http/SourceRanges.ts"

const cases: ReadonlyArray<readonly [ranges: ReadonlyArray<string>, address: string | undefined, allowed: boolean]> = [
  // IPv4 /32
  [["127.0.0.1/32"], "127.0.0.1", true],
  [["127.0.0.1/32"], "127.0.0.2", false],
  [["192.0.2.10/32"], "192.0.2.10", true],
  [["192.0.2.10/32"], "192.0.2.11", false],
  // IPv4 /8
  [["10.0.0.0/8"], "10.0.0.1", true],
  [["10.0.0.0/8"], "10.255.255.255", true],
  [["10.0.0.0/8"], "11.0.0.1", false],
  [["10.0.0.0/8"], "9.255.255.255", false],
  // other IPv4 prefixes
  [["172.16.0.0/12"], "172.31.255.255", true],
  [["172.16.0.0/12"], "172.32.0.1", false],
  [["0.0.0.0/0"], "203.0.113.9", true],
  // IPv6
  [["::1/128"], "::1", true],
  [["::1/128"], "0:0:0:0:0:0:0:1", true],
  [["::1/128"], "::2", false],
  [["::1/128"], "127.0.0.1", false],
  [["fd00::/8"], "fd12:3456::1", true],
  [["fd00::/8"], "fdff:ffff::1", true],
  [["fd00::/8"], "fe80::1", false],
  [["fd00::/8"], "fc00::1", false],
  [["fe80::/10"], "fe80::1%eth0", true],
  // IPv4-mapped IPv6, as a dual-stack socket reports IPv4 peers
  [["127.0.0.1/32"], "::ffff:127.0.0.1", true],
  [["127.0.0.1/32"], "::FFFF:127.0.0.1", true],
  [["127.0.0.1/32"], "::ffff:127.0.0.2", false],
  [["127.0.0.0/8"], "::ffff:127.0.0.2", true],
  [["127.0.0.0/8"], "::ffff:128.0.0.1", false],
  [["10.0.0.0/8"], "::ffff:10.1.2.3", true],
  // a bare address is a single host
  [["10.1.2.3"], "10.1.2.3", true],
  [["10.1.2.3"], "10.1.2.4", false],
  [["10.1.2.3"], "::ffff:10.1.2.3", true],
  [["fd00::5"], "fd00::5", true],
  [["fd00::5"], "fd00::6", false],
  // lists, blanks and whitespace
  [["192.168.0.0/16", "::1/128"], "192.168.44.5", true],
  [["192.168.0.0/16", "::1/128"], "::1", true],
  [["192.168.0.0/16", "::1/128"], "10.0.0.1", false],
  [[" 10.0.0.0/8 ", ""], "10.2.3.4", true],
  [[""], "10.2.3.4", false],
  [[], "127.0.0.1", false],
  // unknown or unparsable sources
  [["127.0.0.0/8"], undefined, false],
  [["0.0.0.0/0", "::/0"], undefined, false],
  [["127.0.0.0/8"], "", false],
  [["127.0.0.0/8"], "not-an-address", false]
]

for (const [ranges, address, allowed] of cases) {
  t.same(
    parseSourceRanges(ranges).allows(address),
    allowed,
    `[${ranges.join(", ") || "(none)"}] ${allowed ? "admits" : "refuses"} ${String(address)}`
  )
}

t.test("the default LAN ranges", async (t) => {
  const lan = parseSourceRanges(defaultLanSourceRanges)
  const cases: ReadonlyArray<readonly [address: string, allowed: boolean]> = [
    ["192.168.1.5", true],
    ["10.0.0.7", true],
    ["172.20.1.1", true],
    ["127.0.0.1", true],
    ["::1", true],
    ["::ffff:10.0.0.7", true],
    ["fd12::1", true],
    ["fe80::1", true],
    ["8.8.8.8", false],
    ["::ffff:8.8.8.8", false],
    ["172.32.0.1", false],
    ["192.169.0.1", false],
    ["2001:db8::1", false]
  ]
  for (const [address, allowed] of cases) t.same(lan.allows(address), allowed, `${allowed ? "admits" : "refuses"} ${address}`)
  t.same(lan.ranges, defaultLanSourceRanges, "the ranges are kept as given")
})

t.test("normaliseAddress reads IPv4-mapped IPv6 as IPv4", async (t) => {
  const cases: ReadonlyArray<readonly [address: string, expected: string]> = [
    ["::ffff:10.0.0.1", "10.0.0.1"],
    ["::FFFF:10.0.0.1", "10.0.0.1"],
    ["10.0.0.1", "10.0.0.1"],
    ["::1", "::1"],
    ["fd00::1", "fd00::1"],
    ["::ffff:abcd", "::ffff:abcd"],
    ["::fffe:10.0.0.1", "::fffe:10.0.0.1"]
  ]
  for (const [address, expected] of cases) t.same(normaliseAddress(address), expected, address)
})

t.test("invalid ranges throw naming the range", async (t) => {
  const message = (range: string) => `invalid source range "${range}": expected CIDR like 192.168.0.0/16 or fd00::/8`
  const thrown = (ranges: ReadonlyArray<string>): string | undefined => {
    try {
      parseSourceRanges(ranges)
      return undefined
    } catch (error) {
      return (error as Error).message
    }
  }
  const cases: ReadonlyArray<readonly [ranges: ReadonlyArray<string>, named: string, todo?: string]> = [
    [["10.0.0.0/33"], "10.0.0.0/33"],
    [["10.0.0.0/-1"], "10.0.0.0/-1"],
    [["10.0.0.0/8.5"], "10.0.0.0/8.5"],
    [["10.0.0.0/x"], "10.0.0.0/x"],
    [["::/129"], "::/129"],
    [["::1/abc"], "::1/abc"],
    [["not-an-ip/8"], "not-an-ip/8"],
    [["not-an-ip"], "not-an-ip"],
    [["1.2.3/24"], "1.2.3/24"],
    [["256.0.0.0/8"], "256.0.0.0/8"],
    [["10.0.0.0 /8"], "10.0.0.0 /8"],
    [["  10.0.0.0/40  "], "10.0.0.0/40"],
    [["127.0.0.0/8", "192.168.0.0/16", "bogus/1"], "bogus/1"],
    [["10.0.0.0/"], "10.0.0.0/"],
    [["::/"], "::/"],
    [["10.0.0.0/8/9"], "10.0.0.0/8/9"]
  ]
  for (const [ranges, named, todo] of cases) {
    t.same(thrown(ranges), message(named), `[${ranges.join(", ")}]`, todo === undefined ? {} : { todo })
  }
})
