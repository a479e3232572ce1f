import t from "tap"
import { parseRepositoryUrl, upstreamUrl } from "../../src/protocols/path.ts"

t.test("valid paths", async (t) => {
  t.same(parseRepositoryUrl("/repository/raw-codehost/a/b%20c.txt?x=1"), {
    ok: true,
    repository: "raw-codehost",
    path: "a/b c.txt",
    query: "x=1"
  })
  t.same(parseRepositoryUrl("/repository/raw-codehost/"), { ok: true, repository: "raw-codehost", path: "", query: "" })
  t.same(parseRepositoryUrl("/repository/npm-proxy/@scope%2fname", { allowEncodedSlash: true }), {
    ok: true,
    repository: "npm-proxy",
    path: "@scope/name",
    query: ""
  })
  t.equal(parseRepositoryUrl("/repository/raw/file..txt").ok, true, "dots inside a name are fine")
})

t.test("refused paths", async (t) => {
  const refused = [
    "/repository/raw/../etc/passwd",
    "/repository/raw/a/../../b",
    "/repository/raw/%2e%2e/etc",
    "/repository/raw/%2E%2e/etc",
    "/repository/raw/.%2e/etc",
    "/repository/raw/./x",
    "/repository/raw/a/%2e/b",
    "/repository/raw/..%2fetc",
    "/repository/raw/a%2Fb",
    "/repository/raw/a%5cb",
    "/repository/raw/a\\b",
    "/repository/raw/a%00b",
    "/repository/raw/a%zzb",
    "/repository/%2e%2e/x",
    "/repository/raw/a%0ab"
  ]
  for (const url of refused) {
    const parsed = parseRepositoryUrl(url)
    t.equal(parsed.ok ? 200 : parsed.status, 400, url)
  }
  const outside = parseRepositoryUrl("/service/rest/v1/status")
  t.equal(outside.ok ? 200 : outside.status, 404, "not under /repository/")
  const npmTraversal = parseRepositoryUrl("/repository/npm/..%2f..%2fx", { allowEncodedSlash: true })
  t.equal(npmTraversal.ok ? 200 : npmTraversal.status, 400, "encoded slashes allowed, traversal still refused")
})

t.test("upstream URLs stay under the base", async (t) => {
  t.equal(upstreamUrl("http://up.example/files", "a/b.txt"), "http://up.example/files/a/b.txt")
  t.equal(upstreamUrl("http://up.example/files/", "a/b.txt", "v=1"), "http://up.example/files/a/b.txt?v=1")
  t.equal(upstreamUrl("http://up.example/", "a?b#c"), "http://up.example/a%3Fb%23c", "? and # in a name are encoded")
  t.equal(new URL(upstreamUrl("http://up.example/base/", "x y/z")).pathname, "/base/x%20y/z")
})
