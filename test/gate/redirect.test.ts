// The gate's post-login redirect (`rd`) validator: oauth2-proxy's open-redirect corpus and its own
// IsValidRedirect table, the payloads of oauth2-proxy's open-redirect advisories, and larder's
// stricter rules (whitelist-domain host and port matching, relative paths, schemes, userinfo).
import t from "tap"
import { readFileSync } from "node:fs"
import { checkRedirect } from "../../src/gate/redirect.ts"

type Asserts = Pick<typeof t, "equal" | "match">

// test names in plain ASCII: TAP output is line-based, and U+2028 and friends would split it
const label = (rd: string) =>
  JSON.stringify(rd).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

const refused = (t: Asserts, rd: string, domains: ReadonlyArray<string>, reason: RegExp) => {
  const result = checkRedirect(rd, domains)
  t.equal(result.ok, false, `${label(rd)} is refused`)
  t.match(result.ok ? `allowed as ${result.target}` : result.reason, reason, `${label(rd)}: reason`)
}

const allowed = (t: Asserts, rd: string, domains: ReadonlyArray<string>, target: string) => {
  const result = checkRedirect(rd, domains)
  t.equal(result.ok, true, `${label(rd)} is allowed${result.ok ? "" : ` (${result.reason})`}`)
  t.equal(result.ok ? result.target : undefined, target, `${label(rd)}: target`)
}

// the whitelist of oauth2-proxy's pkg/app/redirect/validator_test.go
const oauth2ProxyDomains = [
  "foo.bar",
  ".bar.foo",
  "port.bar:8080",
  ".sub.port.bar:8080",
  "anyport.bar:*",
  ".sub.anyport.bar:*",
  "www.whitelisteddomain.tld",
  "*.wildcard.sub.port.bar:8080",
  "*.wildcard.sub.anyport.bar:*",
  "*.wildcard.bar",
  "*.wildcard.proxy.foo.bar",
]

// Go's url.QueryUnescape, which oauth2-proxy's test applies to every line ("+" is a space; an
// invalid escape is an error). Bytes that are not UTF-8 become U+FFFD where Go keeps them raw;
// only two javascript: payloads have such bytes.
const queryUnescape = (line: string): string => {
  const input = Buffer.from(line, "utf8")
  const output: Array<number> = []
  for (let i = 0; i < input.length; i++) {
    if (input[i] === 0x25) {
      const hex = input.subarray(i + 1, i + 3).toString("latin1")
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new Error(`invalid URL escape in ${label(line)}`)
      output.push(Number.parseInt(hex, 16))
      i += 2
    } else output.push(input[i] === 0x2b ? 0x20 : input[i])
  }
  return new TextDecoder().decode(Uint8Array.from(output))
}

t.test("every payload of oauth2-proxy's testdata/openredirects.txt is refused", async (t) => {
  const lines = readFileSync(new URL("fixtures/openredirects.txt", import.meta.url), "utf8").split("\n")
  t.match(lines.shift(), /^# From oauth2-proxy .*MIT License/, "the header names the origin and licence")
  t.equal(lines.pop(), "", "the file ends with a newline")
  t.equal(lines.length, 559, "all 559 lines of the upstream file")
  for (const line of lines) {
    const rd = queryUnescape(line)
    const result = checkRedirect(rd, oauth2ProxyDomains)
    if (rd === "") {
      // oauth2-proxy's IsValidRedirect("") is false and its director then falls back to "/";
      // checkRedirect returns that fallback itself
      t.same(result, { ok: true, target: "/" }, "the empty first line falls back to /")
      continue
    }
    t.equal(result.ok, false, `${label(line)} is refused`)
    t.match(result.ok ? `allowed as ${result.target}` : result.reason, /^redirect to ".*" refused: \S/, `${label(line)}: reason`)
  }
})

t.test("oauth2-proxy's IsValidRedirect table gives the same answers", async (t) => {
  const table: ReadonlyArray<readonly [string, boolean]> = [
    ["/redirect", true],
    ["//redirect", false],
    ["http://foo.bar/redirect", true],
    ["https://foo.bar/redirect", true],
    ["http://baz.foo.bar/redirect", false],
    ["https://baz.foo.bar/redirect", false],
    ["http://baz.bar.foo/redirect", true],
    ["https://baz.bar.foo/redirect", true],
    ["http://bar.foo/redirect", true],
    ["http://foo.bar.evil.corp/redirect", false],
    ["https://foo.bar.evil.corp/redirect", false],
    ["http://evil.corp/redirect?rd=foo.bar", false],
    ["https://evil.corp/redirect?rd=foo.bar", false],
    ["https://evil.corp:3838/redirect", false],
    ["http://foo.bar:3838/redirect", false],
    ["http://baz.bar.foo:3838/redirect", false],
    ["http://port.bar:8080/redirect", true],
    ["http://port.bar:3838/redirect", false],
    ["http://foo.sub.port.bar:8080/redirect", true],
    ["http://foo.subport.bar:3838/redirect", false],
    ["http://anyport.bar:8080/redirect", true],
    ["http://anyport.bar:8081/redirect", true],
    ["http://a.sub.anyport.bar:8080/redirect", true],
    ["http://a.sub.anyport.bar:8081/redirect", true],
    ["/\\evil.com", false],
    ["/ /evil.com", false],
    ["/ \\evil.com", false],
    ["/\t/evil.com", false],
    ["/\t\\evil.com", false],
    ["/\v/evil.com", false],
    ["/\v\\evil.com", false],
    ["/\n/evil.com", false],
    ["/\n\\evil.com", false],
    ["/\r/evil.com", false],
    ["/\r\\evil.com", false],
    ["/\t/\t\\evil.com", false],
    ["/\t\t/\t/evil.com", false],
    ["/\t\t\\\t/evil.com", false],
    ["/\t\t/\t\t\\evil.com", false],
    ["/\t\t\\\t\t/evil.com", false],
    ["/./\\evil.com", false],
    ["/./../../\\evil.com", false],
    ["http://foo.wildcard.bar/redirect", true],
    ["https://foo.wildcard.bar/redirect", true],
    ["http://wildcard.bar/redirect", true],
    ["https://wildcard.bar/redirect", true],
    ["http://foo.wildcard.sub.anyport.bar:4242/redirect", true],
    ["https://foo.wildcard.sub.anyport.bar:4242/redirect", true],
    ["http://wildcard.sub.anyport.bar:4242/redirect", true],
    ["https://wildcard.sub.anyport.bar:4242/redirect", true],
    ["http://foo.wildcard.sub.port.bar:8080/redirect", true],
    ["https://foo.wildcard.sub.port.bar:8080/redirect", true],
    ["http://wildcard.sub.port.bar:8080/redirect", true],
    ["https://wildcard.sub.port.bar:8080/redirect", true],
    ["foo.bar/redirect", false],
    ["proxy.wildcard.bar/redirect", false],
  ]
  for (const [rd, valid] of table) {
    if (valid) allowed(t, rd, oauth2ProxyDomains, rd)
    else refused(t, rd, oauth2ProxyDomains, /^redirect to ".*" refused: \S/)
  }
})

t.test("payloads of oauth2-proxy's open-redirect advisories are refused", async (t) => {
  const domains = [".example.com"]
  // GHSA-qqxw-m5fj-f7gv (CVE-2020-5233, fixed in 5.0.0): "/\" in rd leaves the site
  refused(t, "/\\evil.com", domains, /backslashes are not allowed/)
  refused(t, "/\\/evil.com", domains, /backslashes are not allowed/)
  refused(t, "/%5Cevil.com", domains, /percent-encoded backslashes/)
  // GHSA-j7px-6hwj-hpjg (CVE-2020-11053, fixed in 5.1.1): (encoded) whitespace between the slashes
  for (const space of [" ", "\t", "\v", "\n", "\r"]) {
    refused(t, `/${space}/evil.com`, domains, /control characters and whitespace are not allowed/)
    refused(t, `/${space}\\evil.com`, domains, /control characters and whitespace are not allowed/)
  }
  refused(t, "/%09/evil.com", domains, /percent-encoded control characters/)
  refused(t, "/%0B/evil.com", domains, /percent-encoded control characters/)
  refused(t, "/%0a/evil.com", domains, /percent-encoded control characters/)
  refused(t, "/%0D/evil.com", domains, /percent-encoded control characters/)
  refused(t, "/%20/evil.com", domains, /percent-encoded "\/\/"/)
  // GHSA-5m6c-jp6f-2vcv (CVE-2020-4037, fixed in 6.0.0): repeated whitespace and dot segments
  refused(t, "/\t/\t\\evil.com", domains, /control characters and whitespace/)
  refused(t, "/\t\t/\t/evil.com", domains, /control characters and whitespace/)
  refused(t, "/\t\t\\\t\t/evil.com", domains, /control characters and whitespace/)
  refused(t, "/./\\evil.com", domains, /backslashes are not allowed/)
  refused(t, "/./../../\\evil.com", domains, /backslashes are not allowed/)
  refused(t, "/%09%09/%09/evil.com", domains, /percent-encoded control characters/)
  refused(t, "/./%5Cevil.com", domains, /"\." and "\.\." path segments/)
  refused(t, "/%2e/%5cevil.com", domains, /percent-encoded backslashes/)
  // GHSA-4mf2-f3wh-gvf2 (CVE-2021-21291, fixed in 7.0.0): ".bar.foo" also matched "evilbar.foo"
  refused(t, "http://evilbar.foo", [".bar.foo"], /host evilbar\.foo is not under --whitelist-domain \(\.bar\.foo\)/)
  refused(t, "https://evilexample.com/", domains, /host evilexample\.com is not under --whitelist-domain \(\.example\.com\)/)
  refused(t, "https://badexample.com:443/", [".example.com:*"], /host badexample\.com is not under/)
})

t.test("allowed redirects", async (t) => {
  const domains = [".example.com", "example.org", ".example.net:*", "app.example.io:8443", "*.example.dev"]
  // an empty rd means "back to the start"
  t.same(checkRedirect(undefined, domains), { ok: true, target: "/" })
  t.same(checkRedirect("", domains), { ok: true, target: "/" })
  // a leading dot allows the domain itself and every subdomain
  allowed(t, "https://example.com/", domains, "https://example.com/")
  allowed(t, "https://app.example.com/repository/npm?x=1", domains, "https://app.example.com/repository/npm?x=1")
  allowed(t, "http://a.b.example.com", domains, "http://a.b.example.com/")
  // host names compare case-insensitively
  allowed(t, "https://APP.Example.COM/Path", domains, "https://app.example.com/Path")
  // without a dot: that host only
  allowed(t, "https://example.org/docs#top", domains, "https://example.org/docs#top")
  // "*." is oauth2-proxy's other spelling of the leading dot
  allowed(t, "https://example.dev/", domains, "https://example.dev/")
  allowed(t, "https://ci.example.dev/", domains, "https://ci.example.dev/")
  // ":*" allows any port and none
  allowed(t, "https://example.net:9443/x", domains, "https://example.net:9443/x")
  allowed(t, "http://deep.sub.example.net:1/", domains, "http://deep.sub.example.net:1/")
  allowed(t, "https://example.net/", domains, "https://example.net/")
  // an explicit port allows exactly that port
  allowed(t, "https://app.example.io:8443/", domains, "https://app.example.io:8443/")
  allowed(t, "https://[::1]:8443/", ["[::1]:8443"], "https://[::1]:8443/")
  // judged by where the browser goes: "@" in the fragment is no userinfo, fullwidth letters are ASCII
  allowed(t, "https://app.example.com#@evil.com", domains, "https://app.example.com/#@evil.com")
  allowed(t, "https://\uff41\uff50\uff50.example.com/", domains, "https://app.example.com/")
  // relative paths with query strings and fragments
  allowed(t, "/", domains, "/")
  allowed(t, "/dashboard", domains, "/dashboard")
  allowed(t, "/search?q=a+b&page=2", domains, "/search?q=a+b&page=2")
  allowed(t, "/repository/npm/%40scope%2Fname?tab=versions#latest", domains, "/repository/npm/%40scope%2Fname?tab=versions#latest")
  allowed(t, "/files/.well-known/.../v1.2", domains, "/files/.well-known/.../v1.2")
  allowed(t, "/caf\u00e9?q=100%", domains, "/caf\u00e9?q=100%")
  // relative paths need no whitelist
  allowed(t, "/start", [], "/start")
})

t.test("the reason says what was refused and why", async (t) => {
  t.same(checkRedirect("https://evil.com/", [".example.com"]), {
    ok: false,
    reason: "redirect to \"https://evil.com/\" refused: host evil.com is not under --whitelist-domain (.example.com)",
  })
  refused(t, "https://example.com/", [], /host example\.com is not under --whitelist-domain \(none configured\)$/)
  // control characters, separators and bidi overrides are escaped, long values cut
  const result = checkRedirect("/\r\nSet-Cookie: a=b", [])
  t.equal(result.ok, false)
  t.equal(result.ok ? "" : result.reason, "redirect to \"/\\r\\nSet-Cookie: a=b\" refused: control characters and whitespace are not allowed")
  refused(t, "/\u2028\u202e/evil.com", [], /^redirect to "\/\\u2028\\u202e\/evil\.com" refused: /)
  const long = checkRedirect(`https://evil.com/${"a".repeat(500)}`, [".example.com"])
  t.equal(long.ok, false)
  t.match(long.ok ? "" : long.reason, /^redirect to "https:\/\/evil\.com\/a{183}…" refused: host evil\.com is not under/)
})

t.test("leading-dot and exact whitelist entries, both directions", async (t) => {
  // ".example.com" matches on a label boundary only
  refused(t, "https://evilexample.com/", [".example.com"], /host evilexample\.com is not under --whitelist-domain \(\.example\.com\)/)
  refused(t, "https://example.com.evil.io/", [".example.com"], /host example\.com\.evil\.io is not under/)
  refused(t, "https://example.co/", [".example.com"], /host example\.co is not under/)
  refused(t, "https://com/", [".example.com"], /host com is not under/)
  // "example.com" is that host, no subdomain
  allowed(t, "https://example.com/", ["example.com"], "https://example.com/")
  refused(t, "https://app.example.com/", ["example.com"], /host app\.example\.com is not under --whitelist-domain \(example\.com\)/)
  refused(t, "https://evil.app.example.com/", ["app.example.com"], /host evil\.app\.example\.com is not under/)
  // "app.example.com" does not allow the parent or a sibling
  refused(t, "https://example.com/", ["app.example.com"], /host example\.com is not under/)
  refused(t, "https://api.example.com/", [".app.example.com"], /host api\.example\.com is not under/)
  // case-insensitive in both the entry and the URL
  allowed(t, "https://App.Example.Com/", [".EXAMPLE.com"], "https://app.example.com/")
  // the host in the path, query or fragment is not the host
  refused(t, "https://evil.com/.example.com", [".example.com"], /host evil\.com is not under/)
  refused(t, "https://evil.com?.example.com", [".example.com"], /host evil\.com is not under/)
  refused(t, "https://evil.com#.example.com", [".example.com"], /host evil\.com is not under/)
})

t.test("trailing dots on the host", async (t) => {
  refused(t, "https://example.com./", [".example.com"], /host example\.com\. ends with a dot/)
  refused(t, "https://app.example.com./", [".example.com"], /host app\.example\.com\. ends with a dot/)
  refused(t, "https://evil.com./", [".example.com"], /ends with a dot/)
  refused(t, "https://example.com.evil.com./", [".example.com"], /ends with a dot/)
  refused(t, "https://example.org./", ["example.org"], /ends with a dot/)
  // a trailing dot on the entry does not open up trailing-dot hosts, nor other hosts
  allowed(t, "https://example.org/", ["example.org."], "https://example.org/")
  refused(t, "https://example.org./", ["example.org."], /ends with a dot/)
  refused(t, "https://evil.com/", ["."], /host evil\.com is not under --whitelist-domain \(\.\)/)
})

t.test("ports", async (t) => {
  // no port in the entry: the URL must not name one, not even the default (as oauth2-proxy)
  refused(t, "https://example.com:8443/", [".example.com"], /port 8443 on example\.com is not allowed by --whitelist-domain \(\.example\.com\)/)
  refused(t, "https://app.example.com:443/", [".example.com"], /port 443 on app\.example\.com is not allowed/)
  refused(t, "http://example.org:80/", ["example.org"], /port 80 on example\.org is not allowed/)
  // an explicit port: that port only, spelled the same, and not the portless URL
  refused(t, "https://app.example.io:8444/", ["app.example.io:8443"], /port 8444 on app\.example\.io is not allowed by --whitelist-domain \(app\.example\.io:8443\)/)
  refused(t, "https://app.example.io:08443/", ["app.example.io:8443"], /port 08443 on app\.example\.io is not allowed/)
  refused(t, "https://app.example.io/", ["app.example.io:8443"], /host app\.example\.io needs one of the ports allowed by --whitelist-domain \(app\.example\.io:8443\)/)
  allowed(t, "https://app.example.io:443/", ["app.example.io:443"], "https://app.example.io/")
  // a port wildcard on one entry does not widen another host
  refused(t, "https://evil.com:8443/", [".example.com:*"], /host evil\.com is not under/)
  refused(t, "https://example.com:8443/", ["app.example.com:*", "example.com"], /port 8443 on example\.com is not allowed/)
  // ports WHATWG refuses
  refused(t, "https://example.com:99999/", [".example.com:*"], /it is not a valid URL/)
  refused(t, "https://example.com:80a/", [".example.com:*"], /it is not a valid URL/)
})

t.test("relative paths", async (t) => {
  const domains = [".example.com"]
  refused(t, "//evil.com", domains, /protocol-relative URL/)
  refused(t, "//evil.com/", domains, /protocol-relative URL/)
  refused(t, "/\\evil.com", domains, /backslashes are not allowed/)
  refused(t, "\\/evil.com", domains, /backslashes are not allowed/)
  refused(t, "\\\\evil.com", domains, /backslashes are not allowed/)
  refused(t, "/a\\b", domains, /backslashes are not allowed/)
  refused(t, "/\t/evil.com", domains, /control characters and whitespace are not allowed/)
  refused(t, "/\u0000/evil.com", domains, /control characters and whitespace/)
  refused(t, "/\u007f/evil.com", domains, /control characters and whitespace/)
  refused(t, "/\u00a0/evil.com", domains, /control characters and whitespace/)
  refused(t, "/\u200b/evil.com", domains, /control characters and whitespace/)
  refused(t, "/\u2028/evil.com", domains, /control characters and whitespace/)
  refused(t, "/\u3000/evil.com", domains, /control characters and whitespace/)
  refused(t, "/\ufeff/evil.com", domains, /control characters and whitespace/)
  refused(t, " /dashboard", domains, /control characters and whitespace/)
  refused(t, "/dashboard ", domains, /control characters and whitespace/)
  // "//", "/./" and "/../" anywhere
  refused(t, "/a//b", domains, /"\/\/" is not allowed in a relative path/)
  refused(t, "/a/b?next=//evil.com", domains, /"\/\/" is not allowed in a relative path/)
  refused(t, "/a/b#//evil.com", domains, /"\/\/" is not allowed/)
  refused(t, "/a/./b", domains, /"\." and "\.\." path segments are not allowed/)
  refused(t, "/a/../b", domains, /"\." and "\.\." path segments are not allowed/)
  refused(t, "/..", domains, /path segments are not allowed/)
  refused(t, "/a/.", domains, /path segments are not allowed/)
  refused(t, "/a/..?x=1", domains, /path segments are not allowed/)
  refused(t, "/x?r=/../admin", domains, /path segments are not allowed/)
  // the same, percent-encoded (also twice)
  refused(t, "/%2F%2Fevil.com", domains, /percent-encoded "\/\/"/)
  refused(t, "/%2f%2fevil.com", domains, /percent-encoded "\/\/"/)
  refused(t, "/%2F/evil.com", domains, /percent-encoded "\/\/"/)
  refused(t, "/%252F%252Fevil.com", domains, /percent-encoded "\/\/"/)
  refused(t, "/%5Cevil.com", domains, /percent-encoded backslashes/)
  refused(t, "/%5cevil.com", domains, /percent-encoded backslashes/)
  refused(t, "/%255Cevil.com", domains, /percent-encoded backslashes/)
  refused(t, "/a/%2e/b", domains, /percent-encoded "\." and "\.\." path segments/)
  refused(t, "/a/%2E%2E/b", domains, /percent-encoded "\." and "\.\." path segments/)
  refused(t, "/a/.%2e/b", domains, /percent-encoded "\." and "\.\." path segments/)
  refused(t, "/a%2F..%2Fb", domains, /percent-encoded "\." and "\.\." path segments/)
  refused(t, "/x%0d%0aSet-Cookie:%20a=b", domains, /percent-encoded control characters/)
  refused(t, "/%00", domains, /percent-encoded control characters/)
  // not starting with "/" at all
  refused(t, "%2F%2Fevil.com", domains, /neither a path starting with "\/" nor an http\(s\) URL/)
  refused(t, "%5C%5Cevil.com", domains, /neither a path/)
  refused(t, "evil.com", domains, /neither a path/)
  refused(t, "app.example.com/x", domains, /neither a path/)
  refused(t, ".example.com", domains, /neither a path/)
  refused(t, "?rd=/x", domains, /neither a path/)
})

t.test("schemes other than http and https", async (t) => {
  const domains = [".example.com"]
  refused(t, "javascript:alert(1)", domains, /only http:\/\/ and https:\/\/ URLs are allowed, not javascript:/)
  refused(t, "JavaScript:alert(document.domain)//app.example.com", domains, /not javascript:/)
  refused(t, "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", domains, /not data:/)
  refused(t, "vbscript:msgbox(1)", domains, /not vbscript:/)
  refused(t, "ftp://app.example.com/file", domains, /not ftp:/)
  refused(t, "file:///etc/passwd", domains, /not file:/)
  refused(t, "ws://app.example.com/", domains, /not ws:/)
  // http(s) only exactly as oauth2-proxy matches it: lowercase, two slashes
  refused(t, "HTTPS://app.example.com/", domains, /an https URL must start with exactly "https:\/\/"/)
  refused(t, "https:app.example.com", domains, /an https URL must start with exactly "https:\/\/"/)
  refused(t, "http:/app.example.com", domains, /an http URL must start with exactly "http:\/\/"/)
  refused(t, "https:///app.example.com", domains, /the URL has no host/)
  refused(t, "https://", domains, /the URL has no host/)
})

t.test("userinfo and other host tricks", async (t) => {
  const domains = [".example.com"]
  refused(t, "https://app.example.com@evil.com", domains, /user name or password/)
  refused(t, "https://app.example.com:443@evil.com/", domains, /user name or password/)
  refused(t, "https://evil.com\\@app.example.com", domains, /backslashes are not allowed/)
  refused(t, "https://user:pass@app.example.com/", domains, /user name or password/)
  refused(t, "https://@app.example.com/", domains, /user name or password/)
  refused(t, "https://app.example.com%40evil.com/", domains, /percent-encoded characters are not allowed in the host/)
  refused(t, "https://evil.com%2F.example.com", domains, /percent-encoded characters are not allowed in the host/)
  refused(t, "https://%65vil.com/", domains, /percent-encoded characters are not allowed in the host/)
  // judged by the host the browser would connect to
  refused(t, "https://evil.com#@app.example.com", domains, /host evil\.com is not under/)
  refused(t, "https://evil.com?@app.example.com", domains, /host evil\.com is not under/)
  refused(t, "https://\uff45\uff56\uff49\uff4c.com/", domains, /host evil\.com is not under/)
  refused(t, "https://app.example.com\u3002evil.com/", domains, /host app\.example\.com\.evil\.com is not under/)
  refused(t, "https://evil.com\uff0f.example.com", domains, /it is not a valid URL/)
  refused(t, "https://evil.com;.example.com/", domains, /host evil\.com;\.example\.com is not a plain DNS name or IP address/)
  refused(t, "https://0x7f.1/", domains, /host 127\.0\.0\.1 is not under/)
  refused(t, "https://[::ffff:127.0.0.1]/", domains, /host \[::ffff:7f00:1\] is not under/)
  refused(t, "https://evil.com\t.example.com", domains, /control characters and whitespace/)
})
