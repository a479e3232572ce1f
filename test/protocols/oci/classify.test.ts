import t from "tap"
import { classify, isDockerHub, manifestMediaTypes } from "../../../src/protocols/oci/classify.ts"
import { parseBearerChallenge, pullScope, tokenUrl } from "../../../src/protocols/oci/challenge.ts"

const digest = "sha256:" + "a".repeat(64)
const hub = { dockerHub: true }
const other = { dockerHub: false }
const accept = { accept: manifestMediaTypes.join(", ") }
const apiVersion = { "docker-distribution-api-version": "registry/2.0" }

const cases = [
  ["GET", "v2/", other, { kind: "answer", status: 200, headers: { ...apiVersion, "content-type": "application/json" }, body: "{}" }],
  ["GET", "v2", other, { kind: "answer", status: 200, headers: { ...apiVersion, "content-type": "application/json" }, body: "{}" }],
  ["GET", "library/alpine/manifests/3.20", other, { kind: "invalid", status: 400, message: "Not a docker request", code: "UNSUPPORTED" }],
  ["GET", "v2/library/alpine/nonsense/3.20", other, { kind: "invalid", status: 400, message: "Not a docker request", code: "UNSUPPORTED" }],
  ["GET", "", other, { kind: "invalid", status: 400, message: "Not a docker request", code: "UNSUPPORTED" }],
  ["PUT", "v2/library/alpine/manifests/3.20", other, { kind: "invalid", status: 405, message: "PUT is not supported: proxy repositories are read-only", code: "UNSUPPORTED" }],
  ["POST", "v2/library/alpine/blobs/uploads/", other, { kind: "invalid", status: 405, message: "POST is not supported: proxy repositories are read-only", code: "UNSUPPORTED" }],
  ["GET", "v2/Library/Alpine/manifests/3.20", other, { kind: "invalid", status: 400, message: 'invalid repository name "Library/Alpine"', code: "NAME_INVALID" }],
  ["GET", "v2/alpine/blobs/latest", other, { kind: "invalid", status: 400, message: 'invalid blob digest "latest"', code: "DIGEST_INVALID" }],
  ["GET", "v2/alpine/manifests/-bad", other, { kind: "invalid", status: 400, message: 'invalid manifest reference "-bad"', code: "MANIFEST_UNKNOWN" }],
  ["GET", "v2/alpine/manifests/3.20", hub, {
    kind: "cached", key: "library/alpine/manifests/3.20", upstreamPath: "v2/library/alpine/manifests/3.20", freshness: "metadata",
    upstreamHeaders: accept, revalidateByHeadHeader: "docker-content-digest", notFoundCode: "MANIFEST_UNKNOWN", digestHeader: true, replyHeaders: apiVersion
  }],
  ["HEAD", "v2/alpine/manifests/3.20", other, {
    kind: "cached", key: "alpine/manifests/3.20", upstreamPath: "v2/alpine/manifests/3.20", freshness: "metadata",
    upstreamHeaders: accept, revalidateByHeadHeader: "docker-content-digest", notFoundCode: "MANIFEST_UNKNOWN", digestHeader: true, replyHeaders: apiVersion
  }],
  ["GET", `v2/org/team/app/manifests/${digest}`, hub, {
    kind: "cached", key: `org/team/app/manifests/${digest}`, upstreamPath: `v2/org/team/app/manifests/${digest}`, freshness: "immutable",
    expectedDigest: digest, upstreamHeaders: accept, notFoundCode: "MANIFEST_UNKNOWN", digestHeader: true, replyHeaders: apiVersion
  }],
  ["GET", `v2/alpine/blobs/${digest}`, hub, {
    kind: "cached", key: `blobs/${digest}`, upstreamPath: `v2/library/alpine/blobs/${digest}`, freshness: "immutable",
    expectedDigest: digest, notFoundCode: "BLOB_UNKNOWN", digestHeader: true, replyHeaders: apiVersion
  }],
  ["GET", "v2/library/alpine/tags/list", hub, {
    kind: "cached", key: "library/alpine/tags/list", upstreamPath: "v2/library/alpine/tags/list", freshness: "metadata",
    notFoundCode: "NAME_UNKNOWN", replyHeaders: apiVersion
  }]
] as const
for (const [method, path, options, expected] of cases) t.same(classify(method, path, options), expected, `${method} ${path || "(empty)"}`)

t.test("Docker Hub is recognised by its registry host", async (t) => {
  t.ok(isDockerHub("https://registry-1.docker.io"))
  t.ok(isDockerHub("https://index.docker.io/"))
  t.notOk(isDockerHub("https://ghcr.io"))
  t.notOk(isDockerHub("not a url"))
})

t.test("bearer challenges", async (t) => {
  t.same(
    parseBearerChallenge('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:library/alpine:pull"'),
    { realm: "https://auth.example/token", service: "registry.example", scope: "repository:library/alpine:pull" }
  )
  t.same(parseBearerChallenge('bearer realm="http://127.0.0.1:5001/token"'), { realm: "http://127.0.0.1:5001/token", service: undefined, scope: undefined })
  t.equal(parseBearerChallenge('Basic realm="registry"'), undefined, "not a bearer challenge")
  t.equal(parseBearerChallenge('Bearer realm="file:///etc/passwd"'), undefined, "only http(s) token endpoints")
  t.equal(parseBearerChallenge(undefined), undefined)
  t.equal(pullScope("v2/library/alpine/manifests/3.20"), "repository:library/alpine:pull")
  t.equal(pullScope(`v2/a/b/blobs/${digest}`), "repository:a/b:pull")
  t.equal(pullScope("v2/"), undefined)
  t.equal(
    tokenUrl({ realm: "https://auth.example/token?x=1", service: "reg ok", scope: undefined }, "repository:a:pull"),
    "https://auth.example/token?x=1&service=reg+ok&scope=repository%3Aa%3Apull"
  )
})

t.test("Accept negotiation for tags", async (t) => {
  const { acceptedManifestTypes } = await import("../../../src/protocols/oci/classify.ts")
  t.equal(acceptedManifestTypes(undefined), undefined, "no Accept: any manifest type")
  t.equal(acceptedManifestTypes("*/*"), undefined)
  t.equal(acceptedManifestTypes(manifestMediaTypes.join(", ")), undefined, "all four: the default entry")
  t.same(
    acceptedManifestTypes("application/vnd.docker.distribution.manifest.v2+json; q=0.9, application/json"),
    ["application/vnd.docker.distribution.manifest.v2+json"],
    "an old client that reads Docker v2 only"
  )
  const narrow = classify("GET", "v2/app/manifests/1.0", other, "application/vnd.docker.distribution.manifest.v2+json")
  t.match(narrow, {
    key: "app/manifests/1.0#accept=application/vnd.docker.distribution.manifest.v2+json",
    upstreamHeaders: { accept: "application/vnd.docker.distribution.manifest.v2+json" }
  }, "a narrower Accept is cached apart and sent upstream as it is")
  const byDigest = classify("GET", `v2/app/manifests/${digest}`, other, "application/vnd.docker.distribution.manifest.v2+json")
  t.match(byDigest, { key: `app/manifests/${digest}` }, "content by digest is the same whatever the Accept")
})
