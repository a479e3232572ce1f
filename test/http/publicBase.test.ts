// The base URL written into rewritten metadata: Host and scheme of the connection, or the
// forwarded ones from trusted proxies only; junk in either is never used.
import t from "tap"
import { publicOrigin, repositoryBase } from "../../src/http/publicBase.ts"
import { parseSourceRanges } from "../../src/http/SourceRanges.ts"

const trusted = parseSourceRanges(["127.0.0.1/32", "::1/128"])
const socket = (remoteAddress: string) => ({ remoteAddress, localAddress: "::ffff:127.0.0.1", localPort: 8081 })

const cases: Array<[string, Record<string, string>, string, string]> = [
  ["Host as sent", { host: "larder.lan:8081" }, "10.1.2.3", "http://larder.lan:8081"],
  ["IPv6 Host", { host: "[fd00::5]:8081" }, "10.1.2.3", "http://[fd00::5]:8081"],
  ["trusted proxy: forwarded host and proto", { host: "127.0.0.1:8081", "x-forwarded-host": "cache.example.org", "x-forwarded-proto": "https" }, "127.0.0.1", "https://cache.example.org"],
  ["trusted proxy, IPv4-mapped address", { host: "a", "x-forwarded-host": "b.example" }, "::ffff:127.0.0.1", "http://b.example"],
  ["trusted proxy: first of a list", { host: "a", "x-forwarded-host": "one.example, two.example", "x-forwarded-proto": "https, http" }, "::1", "https://one.example"],
  ["untrusted client: forwarded headers ignored", { host: "larder.lan", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" }, "127.0.0.2", "http://larder.lan"],
  ["bad forwarded host falls back to Host", { host: "larder.lan", "x-forwarded-host": "evil.example/path?x" }, "127.0.0.1", "http://larder.lan"],
  ["unknown forwarded proto ignored", { host: "larder.lan", "x-forwarded-proto": "gopher" }, "127.0.0.1", "http://larder.lan"],
  ["Host with a path is not used", { host: "larder.lan/evil" }, "10.0.0.1", "http://[::ffff:127.0.0.1]:8081"],
  ["Host with userinfo is not used", { host: "user@larder.lan" }, "10.0.0.1", "http://[::ffff:127.0.0.1]:8081"],
  ["no Host: the listener's address", {}, "10.0.0.1", "http://[::ffff:127.0.0.1]:8081"]
]

for (const [label, headers, remote, expected] of cases) {
  t.equal(publicOrigin(headers, socket(remote), trusted), expected, label)
}
t.equal(publicOrigin({ host: "a.lan", "x-forwarded-host": "b.lan" }, socket("127.0.0.1"), undefined), "http://a.lan", "no trusted proxies configured")
t.equal(repositoryBase("http://a.lan", "npm-proxy"), "http://a.lan/repository/npm-proxy")
