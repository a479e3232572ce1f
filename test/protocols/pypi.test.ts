// PyPI's simple API: negotiation, name normalisation, page rewriting and the links it records.
import t from "tap"
import { anchors, classify, decodeEntities, normalise, pageLinks, prefersJson, rewritePage } from "../../src/protocols/pypi/rules.ts"

const remote = "https://pypi.example/"
const base = "http://larder.lan:8081/repository/pypi-proxy"
const page = "https://pypi.example/simple/demo/"
const sha = "c".repeat(64)
const metaSha = "d".repeat(64)

t.test("normalise (PEP 503)", async (t) => {
  const cases: Array<[string, string]> = [["Foo_Bar", "foo-bar"], ["foo.bar", "foo-bar"], ["Foo__-.Bar", "foo-bar"], ["requests", "requests"], ["zope.interface", "zope-interface"]]
  for (const [name, expected] of cases) t.equal(normalise(name), expected, name)
})

t.test("Accept negotiation", async (t) => {
  t.notOk(prefersJson(undefined), "no Accept: HTML")
  t.notOk(prefersJson("text/html"))
  t.ok(prefersJson("application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01"), "pip's Accept")
  t.notOk(prefersJson("application/vnd.pypi.simple.v1+json; q=0.2, text/html"), "HTML preferred by q")
  t.ok(prefersJson("application/vnd.pypi.simple.v1+json, text/html"), "tie: listed first wins")
  t.notOk(prefersJson("text/html, application/vnd.pypi.simple.v1+json"))
  t.notOk(prefersJson("application/vnd.pypi.simple.v1+json;q=0"), "q=0 refuses it")
})

t.test("classify", async (t) => {
  const pip = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1"
  const cases: Array<[string, string, string | undefined, object]> = [
    ["GET", "simple/", undefined, { kind: "cached", key: "simple/", upstreamPath: "simple/", freshness: "metadata", transform: "page" }],
    ["GET", "simple", undefined, { kind: "cached", key: "simple/" }],
    ["GET", "simple/Foo_Bar/", undefined, { kind: "cached", key: "simple/foo-bar/", upstreamPath: "simple/foo-bar/" }],
    ["GET", "simple/foo-bar", undefined, { kind: "cached", key: "simple/foo-bar/" }],
    ["GET", "simple/foo-bar/", pip, { kind: "cached", key: "simple/foo-bar/#json", upstreamPath: "simple/foo-bar/", upstreamHeaders: { accept: /^application\/vnd\.pypi\.simple\.v1\+json/ } }],
    ["GET", "simple/foo-bar/", "text/html", { upstreamHeaders: { accept: /^application\/vnd\.pypi\.simple\.v1\+html/ } }],
    ["GET", "packages/ab/cd/demo-1.0-py3-none-any.whl", undefined, { kind: "cached", upstreamPath: "packages/ab/cd/demo-1.0-py3-none-any.whl", freshness: "immutable", linked: true }],
    ["GET", "_upstream/files.example/packages/demo-1.0.tar.gz", undefined, { kind: "cached", upstreamPath: "", linked: true }],
    ["GET", "_upstream/files.example/packages/demo-1.0.whl.metadata", undefined, { kind: "cached", upstreamPath: "", linked: true }],
    ["GET", "simple/a/b/", undefined, { kind: "invalid", status: 404 }],
    ["GET", "simple/-bad-/", undefined, { kind: "invalid", status: 404 }],
    ["GET", "simple/x#json/", undefined, { kind: "invalid", status: 404 }],
    ["GET", "", undefined, { kind: "invalid", status: 404 }],
    ["POST", "simple/", undefined, { kind: "invalid", status: 405 }]
  ]
  for (const [method, path, accept, expected] of cases) t.match(classify(method, path, accept), expected, `${method} ${JSON.stringify(path)} ${accept ?? ""}`)
})

t.test("entities and anchors", async (t) => {
  t.equal(decodeEntities("a&amp;b&lt;&gt;&quot;&#39;&#x41;&unknown;"), "a&b<>\"'A&unknown;")
  const found = anchors(`<a href='x.whl#sha256=1' data-yanked="">x</a><A HREF=y.tar.gz>y</A><a name="n">no href</a>`)
  t.equal(found.length, 2)
  t.equal(found[0].href, "x.whl#sha256=1")
  t.equal(found[0].attributes.get("data-yanked"), "")
  t.equal(found[1].href, "y.tar.gz", "unquoted, upper-case")
})

const html = `<!DOCTYPE html><html><body>
<a href="https://files.example/packages/ab/demo-1.0-py3-none-any.whl#sha256=${sha}" data-requires-python="&gt;=3.8" data-dist-info-metadata="sha256=${metaSha}" data-core-metadata="sha256=${metaSha}">demo-1.0-py3-none-any.whl</a>
<a href="../../packages/demo-1.0.tar.gz?a=1&amp;b=2#sha256=${sha.toUpperCase()}" data-yanked="broken build">demo-1.0.tar.gz</a>
<a href="/simple/other/">other</a>
<a href="mailto:someone@example">mail</a>
</body></html>`

t.test("HTML page rewritten: URLs to larder, fragments and data-* kept", async (t) => {
  const out = rewritePage(Buffer.from(html), page, remote, base).toString()
  t.match(out, `href="${base}/_upstream/files.example/packages/ab/demo-1.0-py3-none-any.whl#sha256=${sha}"`, "off-host file under _upstream with its fragment")
  t.match(out, `data-requires-python="&gt;=3.8" data-dist-info-metadata="sha256=${metaSha}" data-core-metadata="sha256=${metaSha}"`, "attributes untouched")
  t.match(out, `href="${base}/packages/demo-1.0.tar.gz#sha256=${sha.toUpperCase()}" data-yanked="broken build"`, "relative link resolved against the page; query dropped")
  t.match(out, `href="${base}/simple/other/"`, "absolute-path link into the index")
  t.match(out, `href="mailto:someone@example"`, "other schemes left alone")
})

t.test("HTML page links", async (t) => {
  const links = pageLinks(Buffer.from(html), page, remote)
  t.same(links, [
    { key: "_upstream/files.example/packages/ab/demo-1.0-py3-none-any.whl", url: "https://files.example/packages/ab/demo-1.0-py3-none-any.whl", digest: `sha256:${sha}` },
    { key: "_upstream/files.example/packages/ab/demo-1.0-py3-none-any.whl.metadata", url: "https://files.example/packages/ab/demo-1.0-py3-none-any.whl.metadata", digest: `sha256:${metaSha}` },
    { key: "packages/demo-1.0.tar.gz", url: "https://pypi.example/packages/demo-1.0.tar.gz?a=1&b=2", digest: `sha256:${sha}` }
  ], "project pages are not links")
})

t.test("JSON page (PEP 691)", async (t) => {
  const json = JSON.stringify({
    meta: { "api-version": "1.1" },
    name: "demo",
    files: [
      { filename: "demo-1.0-py3-none-any.whl", url: "https://files.example/packages/ab/demo-1.0-py3-none-any.whl", hashes: { sha256: sha }, "requires-python": ">=3.8", "core-metadata": { sha256: metaSha }, yanked: false },
      { filename: "demo-0.9.tar.gz", url: "../../packages/demo-0.9.tar.gz", hashes: {}, yanked: "bad" },
      { filename: "odd", url: 5 }
    ]
  })
  const out = JSON.parse(rewritePage(Buffer.from(json), page, remote, base).toString())
  t.equal(out.files[0].url, `${base}/_upstream/files.example/packages/ab/demo-1.0-py3-none-any.whl`)
  t.equal(out.files[0]["requires-python"], ">=3.8")
  t.same(out.files[0]["core-metadata"], { sha256: metaSha })
  t.equal(out.files[1].url, `${base}/packages/demo-0.9.tar.gz`)
  t.equal(out.files[1].yanked, "bad")
  t.equal(out.files[2].url, 5, "non-string URL left alone")
  const links = pageLinks(Buffer.from(json), page, remote)
  t.same(links.map((link) => [link.key, link.digest]), [
    ["_upstream/files.example/packages/ab/demo-1.0-py3-none-any.whl", `sha256:${sha}`],
    ["_upstream/files.example/packages/ab/demo-1.0-py3-none-any.whl.metadata", `sha256:${metaSha}`],
    ["packages/demo-0.9.tar.gz", undefined]
  ])
  t.throws(() => rewritePage(Buffer.from("{broken"), page, remote, base))
})
