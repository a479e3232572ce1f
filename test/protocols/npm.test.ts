// npm: routes, packument rewriting and the tarball links (URL + integrity) it records.
import { createHash } from "node:crypto"
import t from "tap"
import { classify, packumentLinks, rewritePackument } from "../../src/protocols/npm/rules.ts"

const remote = "https://registry.example/"
const base = "http://larder.lan:8081/repository/npm-proxy"
const corgi = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"

t.test("classify", async (t) => {
  const cases: Array<[string, string, string | undefined, object]> = [
    ["GET", "left-pad", undefined, { kind: "cached", key: "left-pad", upstreamPath: "left-pad", freshness: "metadata", transform: "packument", upstreamHeaders: { accept: "application/json" } }],
    ["GET", "left-pad", corgi, { kind: "cached", key: "left-pad?abbreviated", upstreamPath: "left-pad", upstreamHeaders: { accept: /^application\/vnd\.npm\.install-v1\+json/ } }],
    ["GET", "@types/node", corgi, { kind: "cached", key: "@types/node?abbreviated", upstreamPath: "@types/node" }],
    ["GET", "JSONStream", undefined, { kind: "cached", key: "JSONStream" }],
    ["GET", "left-pad/-/left-pad-1.3.0.tgz", undefined, { kind: "cached", key: "left-pad/-/left-pad-1.3.0.tgz", upstreamPath: "left-pad/-/left-pad-1.3.0.tgz", freshness: "immutable", linked: true }],
    ["HEAD", "@types/node/-/node-20.1.0.tgz", undefined, { kind: "cached", freshness: "immutable", linked: true }],
    ["GET", "_upstream/cdn.example/t/x-1.0.0.tgz", undefined, { kind: "cached", upstreamPath: "", linked: true }],
    ["GET", "-/package/@types/node/dist-tags", undefined, { kind: "cached", freshness: "metadata" }],
    ["GET", "-/ping", undefined, { kind: "answer", status: 200 }],
    ["GET", "-/v1/search", undefined, { kind: "invalid", status: 404 }],
    ["GET", "-/whoami", undefined, { kind: "invalid", status: 404 }],
    ["POST", "-/npm/v1/security/advisories/bulk", undefined, { kind: "invalid", status: 405, message: /read-only proxy/ }],
    ["PUT", "left-pad", undefined, { kind: "invalid", status: 405 }],
    ["PUT", "-/user/org.couchdb.user:me", undefined, { kind: "invalid", status: 405 }],
    ["DELETE", "left-pad/-/left-pad-1.3.0.tgz/-rev/1", undefined, { kind: "invalid", status: 405 }],
    ["GET", "", undefined, { kind: "invalid", status: 404 }],
    ["GET", "a/b/c", undefined, { kind: "invalid", status: 404 }],
    ["GET", "@scope", undefined, { kind: "invalid", status: 404 }],
    ["GET", ".hidden", undefined, { kind: "invalid", status: 404 }]
  ]
  for (const [method, path, accept, expected] of cases) t.match(classify(method, path, accept), expected, `${method} ${JSON.stringify(path)}`)
})

const bytes = Buffer.from("tarball bytes")
const sha512 = createHash("sha512").update(bytes).digest()
const sha1 = createHash("sha1").update(bytes).digest("hex")
const packument = {
  name: "@s/pkg",
  "dist-tags": { latest: "1.1.0" },
  versions: {
    "1.0.0": { name: "@s/pkg", version: "1.0.0", dist: { tarball: "https://registry.example/@s/pkg/-/pkg-1.0.0.tgz", shasum: sha1 } },
    "1.1.0": { name: "@s/pkg", version: "1.1.0", dist: { tarball: "https://cdn.example/t/pkg-1.1.0.tgz", integrity: `sha1-x sha512-${sha512.toString("base64")}`, shasum: sha1 } },
    "1.2.0": { name: "@s/pkg", version: "1.2.0", dist: { tarball: 42 } },
    "1.3.0": null
  },
  time: { created: "2026-01-01" }
}

t.test("rewritePackument", async (t) => {
  const out = JSON.parse(rewritePackument(Buffer.from(JSON.stringify(packument)), "https://registry.example/@s/pkg", remote, base).toString())
  t.equal(out.versions["1.0.0"].dist.tarball, `${base}/@s/pkg/-/pkg-1.0.0.tgz`, "tarball on the registry")
  t.equal(out.versions["1.1.0"].dist.tarball, `${base}/_upstream/cdn.example/t/pkg-1.1.0.tgz`, "tarball on another host")
  t.equal(out.versions["1.2.0"].dist.tarball, 42, "odd values left alone")
  t.same(out.time, packument.time, "other fields kept")
  t.throws(() => rewritePackument(Buffer.from("[1]"), "https://registry.example/x", remote, base), /not a JSON object/)
})

t.test("packumentLinks", async (t) => {
  t.same(packumentLinks(Buffer.from(JSON.stringify(packument)), "https://registry.example/@s/pkg", remote), [
    { key: "@s/pkg/-/pkg-1.0.0.tgz", url: "https://registry.example/@s/pkg/-/pkg-1.0.0.tgz", digest: `sha1:${sha1}` },
    { key: "_upstream/cdn.example/t/pkg-1.1.0.tgz", url: "https://cdn.example/t/pkg-1.1.0.tgz", digest: `sha512:${sha512.toString("hex")}` }
  ], "sha512 integrity preferred over shasum; sha1 shasum when no integrity")
  t.same(packumentLinks(Buffer.from(JSON.stringify({ name: "x" })), "https://registry.example/x", remote), [], "no versions")
})
