// The Go module proxy protocol: which paths are metadata, which are immutable, and the case
// encoding of module paths.
import t from "tap"
import { classify, decodeCase, isCanonicalVersion } from "../../src/protocols/go/rules.ts"

t.test("case encoding", async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ["example.com/!greeter", "example.com/Greeter"],
    ["github.com/!azure/azure-sdk-for-go", "github.com/Azure/azure-sdk-for-go"],
    ["github.com/!b!u!r!n!t!sushi/toml", "github.com/BURNTSushi/toml"],
    ["plain/path", "plain/path"],
    ["example.com/Greeter", undefined],
    ["example.com/!", undefined],
    ["example.com/!!a", undefined],
    ["example.com/!1", undefined],
    ["", ""]
  ]
  for (const [encoded, decoded] of cases) t.equal(decodeCase(encoded), decoded, JSON.stringify(encoded))
})

t.test("canonical versions", async (t) => {
  for (const version of ["v1.2.3", "v0.0.0-20230101120000-abcdef123456", "v2.0.0+incompatible", "v1.0.0-rc.1", "v10.20.30"]) {
    t.ok(isCanonicalVersion(version), version)
  }
  for (const version of ["master", "v1.2", "1.2.3", "v01.2.3", "v1.2.3-", "latest", "v1.2.3+meta"]) {
    t.notOk(isCanonicalVersion(version), version)
  }
})

t.test("classify", async (t) => {
  const cases: Array<[string, string, object]> = [
    ["GET", "example.com/util/@v/list", { kind: "cached", key: "example.com/util/@v/list", upstreamPath: "example.com/util/@v/list", freshness: "metadata" }],
    ["GET", "example.com/util/@latest", { kind: "cached", freshness: "metadata" }],
    ["GET", "example.com/util/@v/v1.2.3.info", { kind: "cached", freshness: "immutable" }],
    ["GET", "example.com/util/@v/v1.2.3.mod", { kind: "cached", freshness: "immutable" }],
    ["HEAD", "example.com/!greeter/@v/v0.1.0.zip", { kind: "cached", key: "example.com/!greeter/@v/v0.1.0.zip", freshness: "immutable" }],
    ["GET", "example.com/util/@v/master.info", { kind: "cached", freshness: "metadata" }],
    ["GET", "example.com/util/@v/v1.0.0-!r!c1.info", { kind: "cached", freshness: "immutable" }],
    ["GET", "golang.org/x/mod/@v/v0.0.0-20230101120000-abcdef123456.zip", { freshness: "immutable" }],
    ["GET", "example.com/Greeter/@v/list", { kind: "invalid", status: 400 }],
    ["GET", "example.com/!/@v/list", { kind: "invalid", status: 400 }],
    ["GET", "example.com/util/@v/V1.0.0.info", { kind: "invalid", status: 400 }],
    ["GET", "example.com/util", { kind: "invalid", status: 404 }],
    ["GET", "example.com/util/@v/", { kind: "invalid", status: 404 }],
    ["GET", "example.com/util/@v/v1.0.0.tar", { kind: "invalid", status: 404 }],
    ["GET", "", { kind: "invalid", status: 404 }],
    ["GET", "sumdb/sum.golang.org/supported", { kind: "cached", key: "sumdb/sum.golang.org/supported", freshness: "metadata" }],
    ["GET", "sumdb/sum.golang.org/latest", { freshness: "metadata" }],
    ["GET", "sumdb/sum.golang.org/lookup/example.com/util@v1.2.3", { freshness: "metadata" }],
    ["GET", "sumdb/sum.golang.org/tile/8/0/x001/234", { freshness: "immutable" }],
    ["GET", "sumdb/sum.golang.org/tile/8/1/005.p/17", { freshness: "metadata" }],
    ["GET", "sumdb/sum.golang.org/tile/8/data/x001/234", { freshness: "immutable" }],
    ["GET", "sumdb/sum.golang.org/tile/8/0/12", { kind: "invalid", status: 404 }],
    ["GET", "sumdb/sum.golang.org/other", { kind: "invalid", status: 404 }],
    ["GET", "sumdb/", { kind: "invalid", status: 404 }],
    ["POST", "example.com/util/@v/list", { kind: "invalid", status: 405 }]
  ]
  for (const [method, path, expected] of cases) t.match(classify(method, path), expected, `${method} ${JSON.stringify(path)}`)
})
