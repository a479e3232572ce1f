// Request paths under /repository/<name>/: decoded once, refused when they could leave the
// repository, and joined to an upstream base without escaping it.
import t from "tap"
import { checkDecodedPath, parseArtifactUrl, parseRepositoryUrl, type RepositoryPath, upstreamUrl } from "../../src/protocols/path.ts"

const traversal = "path traversal is not allowed"
const emptySegment = "empty path segments (//) are not allowed"
const control = "control characters and backslashes are not allowed in paths"
const encoded = "encoded slashes, backslashes and NUL are not allowed in paths"
const malformed = "malformed percent-encoding in path"
const notRepository = "expected /repository/<name>/<path>"

const ok = (repository: string, path: string, query = ""): RepositoryPath => ({ ok: true, repository, path, query })
const refused = (status: 400 | 404, message: string): RepositoryPath => ({ ok: false, status, message })

type Options = { readonly allowEncodedSlash?: boolean }
type Case = readonly [label: string, url: string, options: Options, expected: RepositoryPath, todo?: string]

const plain: Options = {}
const npm: Options = { allowEncodedSlash: true }

const okCases: ReadonlyArray<Case> = [
  ["simple path", "/repository/raw-codehost/a/b.txt", plain, ok("raw-codehost", "a/b.txt")],
  ["query is split off and kept raw", "/repository/raw-codehost/a/b%20c.txt?x=1&y=%2F", plain, ok("raw-codehost", "a/b c.txt", "x=1&y=%2F")],
  ["empty query", "/repository/raw/a?", plain, ok("raw", "a", "")],
  ["only the first ? splits", "/repository/raw/a?b?c", plain, ok("raw", "a", "b?c")],
  ["query may contain ../", "/repository/raw/a?next=../../etc", plain, ok("raw", "a", "next=../../etc")],
  ["repository root with slash", "/repository/raw-codehost/", plain, ok("raw-codehost", "")],
  ["repository root without slash", "/repository/raw-codehost", plain, ok("raw-codehost", "")],
  ["repository root with query", "/repository/raw?x=1", plain, ok("raw", "", "x=1")],
  ["dots inside a segment", "/repository/raw/file..txt", plain, ok("raw", "file..txt")],
  ["three dots are a name", "/repository/raw/.../x", plain, ok("raw", ".../x")],
  ["dot-files", "/repository/raw/.well-known/x", plain, ok("raw", ".well-known/x")],
  ["a literal ./ is removed (apt's flat repositories)", "/repository/raw/./x", plain, ok("raw", "x")],
  ["a/./b is a/b", "/repository/raw/a/./b", plain, ok("raw", "a/b")],
  ["trailing . is the directory", "/repository/raw/a/.", plain, ok("raw", "a/")],
  ["percent-encoded letters are decoded once", "/repository/raw/%41%62", plain, ok("raw", "Ab")],
  ["double-encoded dots are decoded only once", "/repository/raw/%252e%252e/x", plain, ok("raw", "%2e%2e/x")],
  ["unicode", "/repository/raw/caf%C3%A9", plain, ok("raw", "café")],
  ["npm scoped name with %2f", "/repository/npm-proxy/@scope%2fname", npm, ok("npm-proxy", "@scope/name")],
  ["npm scoped name with %2F", "/repository/npm-proxy/@scope%2Fname?write=true", npm, ok("npm-proxy", "@scope/name", "write=true")],
  ["allowEncodedSlash: false behaves like the default", "/repository/raw/a/b", { allowEncodedSlash: false }, ok("raw", "a/b")]
]

const badCases: ReadonlyArray<Case> = [
  // literal and encoded dot segments
  ["..", "/repository/raw/../etc/passwd", plain, refused(400, traversal)],
  ["trailing ..", "/repository/raw/a/..", plain, refused(400, traversal)],
  ["a/../../b", "/repository/raw/a/../../b", plain, refused(400, traversal)],
  ["%2e%2e", "/repository/raw/%2e%2e/etc", plain, refused(400, traversal)],
  ["%2E%2e/", "/repository/raw/%2E%2e/etc", plain, refused(400, traversal)],
  [".%2e", "/repository/raw/.%2e/etc", plain, refused(400, traversal)],
  ["%2e.", "/repository/raw/a/%2e./b", plain, refused(400, traversal)],
  ["%2e as a segment", "/repository/raw/a/%2e/b", plain, refused(400, traversal)],
  ["./..", "/repository/raw/./../x", plain, refused(400, traversal)],
  [".. as the repository name", "/repository/../x", plain, refused(400, traversal)],
  ["%2e%2e as the repository name", "/repository/%2e%2e/x", plain, refused(400, traversal)],
  ["encoded slashes and dots with allowEncodedSlash", "/repository/npm/..%2f..%2fx", npm, refused(400, traversal)],
  ["%2e%2e%2f with allowEncodedSlash", "/repository/npm/%2e%2e%2fx", npm, refused(400, traversal)],

  // encoded slashes, backslashes and NUL
  ["%2f", "/repository/raw/a%2fb", plain, refused(400, encoded)],
  ["%2F", "/repository/raw/a%2Fb", plain, refused(400, encoded)],
  ["..%2f", "/repository/raw/..%2fetc", plain, refused(400, encoded)],
  ["%5c", "/repository/raw/a%5cb", plain, refused(400, encoded)],
  ["%5C..", "/repository/raw/a%5C..%5Cb", plain, refused(400, encoded)],
  ["%00", "/repository/raw/a%00b", plain, refused(400, encoded)],
  ["%5c with allowEncodedSlash is still refused", "/repository/npm/a%5cb", npm, refused(400, control)],
  ["%00 with allowEncodedSlash is still refused", "/repository/npm/a%00b", npm, refused(400, control)],

  // raw backslash, NUL and other control characters
  ["backslash", "/repository/raw/a\\b", plain, refused(400, control)],
  ["backslash traversal", "/repository/raw/..\\..\\etc", plain, refused(400, control)],
  ["NUL", "/repository/raw/a\u0000b", plain, refused(400, control)],
  ["%0a", "/repository/raw/a%0ab", plain, refused(400, control)],
  ["%7f", "/repository/raw/a%7fb", plain, refused(400, control)],
  ["backslash in the repository name", "/repository/raw%5c/x", plain, refused(400, encoded)],
  ["NUL in the repository name", "/repository/raw%00/x", plain, refused(400, encoded)],

  // double slashes
  ["encoded double slash", "/repository/raw/a%2f%2fb", plain, refused(400, encoded)],
  ["encoded slash after a slash", "/repository/raw/a/%2F/b", plain, refused(400, encoded)],
  ["double slash after the repository (absolute path)", "/repository/raw//etc/passwd", plain, refused(400, emptySegment)],
  ["double slash inside the path", "/repository/raw/a//b", plain, refused(400, emptySegment)],
  ["encoded double slash with allowEncodedSlash", "/repository/npm/a%2f%2fb", npm, refused(400, emptySegment)],

  // malformed percent-encoding
  ["%zz", "/repository/raw/a%zzb", plain, refused(400, malformed)],
  ["truncated %", "/repository/raw/a%", plain, refused(400, malformed)],
  ["truncated %2", "/repository/raw/a%2", plain, refused(400, malformed)],
  ["invalid UTF-8", "/repository/raw/%C3", plain, refused(400, malformed)],
  ["%zz in the repository name", "/repository/r%zz/x", plain, refused(400, malformed)],

  // not under /repository/<name>
  ["status endpoint", "/service/rest/v1/status", plain, refused(404, notRepository)],
  ["/repository alone", "/repository", plain, refused(404, notRepository)],
  ["/repository/ without a name", "/repository/", plain, refused(404, notRepository)],
  ["empty repository name", "/repository//raw/x", plain, refused(404, notRepository)],
  ["prefix that is not a segment", "/repositoryx/raw/a", plain, refused(404, notRepository)],
  ["relative", "repository/raw/a", plain, refused(404, notRepository)],
  ["empty url", "", plain, refused(404, notRepository)],
  ["/repository only in the query", "/x?/repository/raw/a", plain, refused(404, notRepository)]
]

const cases = [...okCases, ...badCases]
for (const [label, url, options, expected, todo] of cases) {
  t.same(parseRepositoryUrl(url, options), expected, `${label}: ${JSON.stringify(url)}`, todo === undefined ? {} : { todo })
}

t.test("checkDecodedPath", async (t) => {
  const cases: ReadonlyArray<readonly [path: string, expected: string | undefined]> = [
    ["", undefined],
    ["a/b/c.txt", undefined],
    ["a..b/c", undefined],
    ["...", undefined],
    ["..", traversal],
    [".", traversal],
    ["a/..", traversal],
    ["../a", traversal],
    ["a/./b", traversal],
    ["a\\b", control],
    ["a\u0000b", control],
    ["a\tb", control],
    ["a\u001fb", control],
    ["a\u007fb", control],
    ["a\u0080b", undefined]
  ]
  for (const [path, expected] of cases) t.same(checkDecodedPath(path), expected, JSON.stringify(path))
})

t.test("upstreamUrl stays under the base", async (t) => {
  const base = "http://up.example/files/"
  const cases: ReadonlyArray<readonly [label: string, remote: string, path: string, query: string, expected: string, todo?: string]> = [
    ["plain path", "http://up.example/files", "a/b.txt", "", "http://up.example/files/a/b.txt"],
    ["base with a trailing slash", base, "a/b.txt", "", "http://up.example/files/a/b.txt"],
    ["query appended", base, "a/b.txt", "v=1&w=2", "http://up.example/files/a/b.txt?v=1&w=2"],
    ["empty path", base, "", "", "http://up.example/files/"],
    ["? in a segment is encoded", "http://up.example/", "a?b", "", "http://up.example/a%3Fb"],
    ["# in a segment is encoded", "http://up.example/", "a#b", "", "http://up.example/a%23b"],
    ["? and # in a segment with a query", base, "a?b#c", "q=1", "http://up.example/files/a%3Fb%23c?q=1"],
    ["space and percent are encoded", base, "x y/100%", "", "http://up.example/files/x%20y/100%25"],
    ["a decoded %2e%2e stays literal", base, "%2e%2e/x", "", "http://up.example/files/%252e%252e/x"],
    ["a scoped npm name keeps its slash and @", "http://npm.example/", "@scope/name", "", "http://npm.example/@scope/name"],
    ["a digest keeps its colon", base, "v2/a/blobs/sha256:abc", "", "http://up.example/files/v2/a/blobs/sha256:abc"],
    ["base with a path and no trailing slash", "http://up.example/a/b", "c", "", "http://up.example/a/b/c"],
    ["unicode", base, "café", "", "http://up.example/files/caf%C3%A9"],

  ]
  for (const traversal of ["../secret", "a/../../x", "./x"]) {
    t.throws(() => upstreamUrl(base, traversal), /path traversal/, `${traversal} is refused, not encoded (URL parsers resolve %2E%2E)`)
  }
  for (const [label, remote, path, query, expected, todo] of cases) {
    const joined = upstreamUrl(remote, path, query)
    const resolved = new URL(joined)
    const baseUrl = new URL(remote.endsWith("/") ? remote : remote + "/")
    t.same(
      { href: resolved.href, origin: resolved.origin, underBase: resolved.pathname.startsWith(baseUrl.pathname), hash: resolved.hash },
      { href: expected, origin: baseUrl.origin, underBase: true, hash: "" },
      label,
      todo === undefined ? {} : { todo }
    )
  }
})

t.test("registry clients' path-based form", async (t) => {
  t.same(parseArtifactUrl("/v2/docker-public/library/alpine/manifests/3.20"), {
    ok: true, repository: "docker-public", path: "v2/library/alpine/manifests/3.20", query: "", pathBased: true
  })
  t.same(parseArtifactUrl("/v2/repository/docker-public/library/alpine/manifests/3.20"), {
    ok: true, repository: "docker-public", path: "v2/library/alpine/manifests/3.20", query: "", pathBased: true
  }, "docker://host/repository/<name>/<image> works too")
  t.same(parseArtifactUrl("/repository/docker-public/v2/library/alpine/manifests/3.20?ns=docker.io"), {
    ok: true, repository: "docker-public", path: "v2/library/alpine/manifests/3.20", query: "ns=docker.io"
  }, "the mirror endpoint form, with containerd's ns query")
  const traversal = parseArtifactUrl("/v2/docker-public/../../etc/passwd")
  t.equal(traversal.ok, false)
})
