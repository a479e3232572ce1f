// Helm: classification, index.yaml rewriting and the links (URL + digest) it records.
import t from "tap"
import { parse } from "yaml"
import { classify, indexLinks, rewriteIndex } from "../../src/protocols/helm/rules.ts"

const remote = "https://charts.example/stable/"
const base = "http://127.0.0.1:8081/repository/helm-stable"
const digestA = "a".repeat(64)
const index = `apiVersion: v1
entries:
  alpine:
    - name: alpine
      version: 0.2.0
      digest: ${digestA}
      urls:
        - alpine-0.2.0.tgz
    - name: alpine
      version: 0.1.0
      digest: ${"B".repeat(64)}
      urls:
        - https://charts.example/stable/charts/alpine-0.1.0.tgz
  redis:
    - name: redis
      version: 1.0.0
      digest: not-a-digest
      urls:
        - https://downloads.example/releases/v1/redis-1.0.0.tgz
        - ../../escape/redis.tgz
  empty: []
generated: "2026-01-01T00:00:00Z"
`

t.test("classify", async (t) => {
  const cases: Array<[string, string, object]> = [
    ["GET", "index.yaml", { kind: "cached", key: "index.yaml", freshness: "metadata", transform: "index" }],
    ["GET", "", { kind: "cached", key: "index.yaml" }],
    ["HEAD", "alpine-0.2.0.tgz", { kind: "cached", key: "alpine-0.2.0.tgz", upstreamPath: "alpine-0.2.0.tgz", freshness: "immutable", linked: true }],
    ["GET", "charts/alpine-0.2.0.tgz.prov", { freshness: "immutable", linked: true }],
    ["GET", "_upstream/downloads.example/releases/v1/redis-1.0.0.tgz", { upstreamPath: "", linked: true }],
    ["GET", "_upstream/downloads.example/anything", { upstreamPath: "", linked: true }],
    ["GET", "README.md", { kind: "cached", freshness: "content" }],
    ["PUT", "alpine-0.2.0.tgz", { kind: "invalid", status: 405 }],
    ["POST", "index.yaml", { kind: "invalid", status: 405 }]
  ]
  for (const [method, path, expected] of cases) t.match(classify(method, path), expected, `${method} ${JSON.stringify(path)}`)
})

t.test("rewriteIndex points every chart URL at larder, relative and absolute", async (t) => {
  const rewritten = parse(rewriteIndex(Buffer.from(index), base, remote).toString())
  t.same(rewritten.entries.alpine[0].urls, [`${base}/alpine-0.2.0.tgz`], "relative URL resolved against the index")
  t.same(rewritten.entries.alpine[1].urls, [`${base}/charts/alpine-0.1.0.tgz`], "absolute URL below the upstream")
  t.same(rewritten.entries.redis[0].urls, [
    `${base}/_upstream/downloads.example/releases/v1/redis-1.0.0.tgz`,
    `${base}/_upstream/charts.example/escape/redis.tgz`
  ], "another host, or a path outside the upstream's, is served under _upstream/<host>/")
  t.equal(rewritten.generated, "2026-01-01T00:00:00Z", "other fields kept")
  t.equal(rewritten.entries.alpine[0].digest, digestA, "digest kept")
  t.same(rewritten.entries.empty, [])
})

t.test("indexLinks: URL and sha256 per chart, provenance next to it", async (t) => {
  const links = indexLinks(Buffer.from(index), remote)
  const byKey = new Map(links.map((link) => [link.key, link]))
  t.same(byKey.get("alpine-0.2.0.tgz"), { key: "alpine-0.2.0.tgz", url: "https://charts.example/stable/alpine-0.2.0.tgz", digest: `sha256:${digestA}` })
  t.equal(byKey.get("charts/alpine-0.1.0.tgz")?.digest, `sha256:${"b".repeat(64)}`, "upper-case digest normalised")
  t.same(byKey.get("alpine-0.2.0.tgz.prov"), { key: "alpine-0.2.0.tgz.prov", url: "https://charts.example/stable/alpine-0.2.0.tgz.prov" })
  t.same(byKey.get("_upstream/downloads.example/releases/v1/redis-1.0.0.tgz"), {
    key: "_upstream/downloads.example/releases/v1/redis-1.0.0.tgz",
    url: "https://downloads.example/releases/v1/redis-1.0.0.tgz",
    digest: undefined
  }, "a malformed digest is not a checksum")
  t.notOk([...byKey.keys()].some((key) => key.includes("..")), "no key steps outside the repository")
  t.equal(byKey.get("_upstream/charts.example/escape/redis.tgz")?.url, "https://charts.example/escape/redis.tgz", "dot segments resolved by URL rules")
})

t.test("malformed index.yaml is an error, not a crash", async (t) => {
  t.throws(() => rewriteIndex(Buffer.from("- just\n- a list\n"), base, remote), /not a mapping/)
  t.throws(() => indexLinks(Buffer.from("entries: 5\n"), remote), /entries/)
  t.throws(() => rewriteIndex(Buffer.from("a: [unclosed\n"), base, remote))
  t.same(
    parse(rewriteIndex(Buffer.from("entries:\n  x:\n    - urls: [5, null]\n    - 7\n"), base, remote).toString()).entries.x,
    [{ urls: [5, null] }, 7],
    "non-string URLs and odd entries are left alone"
  )
  t.same(indexLinks(Buffer.from("apiVersion: v1\n"), remote), [], "no entries: no links")
})
