// Cargo's sparse index: path layout, config.json for clients, download URLs from dl templates,
// and the links (URL + cksum) read from index files.
import t from "tap"
import { classify, downloadUrl, indexLinks, indexPath, rewriteConfig } from "../../src/protocols/cargo/rules.ts"

const cksum = "ab".repeat(32)

t.test("index layout", async (t) => {
  const cases: Array<[string, string]> = [["a", "1/a"], ["ab", "2/ab"], ["abc", "3/a/abc"], ["serde", "se/rd/serde"], ["syn", "3/s/syn"], ["cargo-edit", "ca/rg/cargo-edit"]]
  for (const [name, path] of cases) t.equal(indexPath(name), path, name)
})

t.test("classify", async (t) => {
  const cases: Array<[string, string, object]> = [
    ["GET", "config.json", { kind: "cached", key: "config.json", freshness: "metadata", transform: "config" }],
    ["GET", "1/a", { kind: "cached", key: "1/a", upstreamPath: "1/a", freshness: "metadata", transform: "index" }],
    ["GET", "2/ab", { kind: "cached", transform: "index" }],
    ["GET", "3/s/syn", { kind: "cached", transform: "index" }],
    ["GET", "se/rd/serde", { kind: "cached", transform: "index" }],
    ["GET", "ca/rg/cargo-edit", { kind: "cached", transform: "index" }],
    ["HEAD", "crates/serde/1.0.0/download", { kind: "cached", key: "crates/serde/1.0.0/download", upstreamPath: "", freshness: "immutable", linked: true }],
    ["GET", "crates/serde/1.0.0+build.1/download", { kind: "cached", linked: true }],
    ["GET", "3/x/syn", { kind: "invalid", status: 404 }],
    ["GET", "2/abc", { kind: "invalid", status: 404 }],
    ["GET", "1/ab", { kind: "invalid", status: 404 }],
    ["GET", "se/rd/Serde", { kind: "invalid", status: 404 }],
    ["GET", "ab/cd/abcd/extra", { kind: "invalid", status: 404 }],
    ["GET", "", { kind: "invalid", status: 404 }],
    ["GET", "crates/serde/download", { kind: "invalid", status: 404 }],
    ["PUT", "api/v1/crates/new", { kind: "invalid", status: 405 }]
  ]
  for (const [method, path, expected] of cases) t.match(classify(method, path), expected, `${method} ${JSON.stringify(path)}`)
})

t.test("config.json for clients", async (t) => {
  const upstream = Buffer.from(JSON.stringify({ dl: "https://static.example/crates", api: "https://crates.example", "auth-required": false }))
  t.same(JSON.parse(rewriteConfig(upstream, "http://larder.lan:8081/repository/cargo-proxy").toString()), {
    dl: "http://larder.lan:8081/repository/cargo-proxy/crates",
    "auth-required": false
  }, "dl points at larder, api is gone, other keys kept")
  t.throws(() => rewriteConfig(Buffer.from("[]"), "http://x"), /not an object/)
  t.throws(() => rewriteConfig(Buffer.from("{"), "http://x"))
})

t.test("download URLs from dl templates", async (t) => {
  t.equal(downloadUrl("https://static.example/crates", "serde", "1.0.0", cksum), "https://static.example/crates/serde/1.0.0/download", "no markers: appended")
  t.equal(downloadUrl("https://static.example/crates/", "serde", "1.0.0", cksum), "https://static.example/crates/serde/1.0.0/download")
  t.equal(downloadUrl("https://s.example/{crate}/{crate}-{version}.crate", "serde", "1.0.0", cksum), "https://s.example/serde/serde-1.0.0.crate")
  t.equal(downloadUrl("https://s.example/{prefix}/{lowerprefix}/{sha256-checksum}", "Serde", "1.0.0", cksum), `https://s.example/Se/rd/se/rd/${cksum}`)
  t.equal(downloadUrl("https://s.example/{prefix}/{crate}", "syn", "2.0.0", cksum), "https://s.example/3/s/syn")
})

t.test("index links", async (t) => {
  const lines = [
    JSON.stringify({ name: "serde", vers: "1.0.0", deps: [], cksum, features: {}, yanked: false }),
    JSON.stringify({ name: "serde", vers: "1.0.1", deps: [], cksum: cksum.toUpperCase(), features: {}, yanked: true }),
    JSON.stringify({ name: "serde", vers: "1.0.2", cksum: "short" }),
    "{not json",
    JSON.stringify({ name: "serde", cksum }),
    ""
  ].join("\n")
  const links = indexLinks(Buffer.from(lines), "https://static.example/crates")
  t.same(links, [
    { key: "crates/serde/1.0.0/download", url: "https://static.example/crates/serde/1.0.0/download", digest: `sha256:${cksum}` },
    { key: "crates/serde/1.0.1/download", url: "https://static.example/crates/serde/1.0.1/download", digest: `sha256:${cksum}` }
  ], "yanked versions still download (lockfiles may name them); bad lines are skipped")
})
