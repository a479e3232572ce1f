// apt: routes, Release parsing and its links (by hash when offered), and the package links read
// from Packages indexes in each compression.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { gzipSync } from "node:zlib"
import t from "tap"
import { classify, packagesRoot, parseRelease, releaseLinks } from "../../src/protocols/apt/rules.ts"
import { compressionOf, packagesLinks, parseStanzas } from "../../src/protocols/apt/packages.ts"

const hex = "ab".repeat(32)
const remote = "http://mirror.example/debian/"

t.test("classify", async (t) => {
  const cases: Array<[string, string, object]> = [
    ["GET", "dists/stable/InRelease", { kind: "cached", key: "dists/stable/InRelease", freshness: "metadata", transform: "release" }],
    ["GET", "dists/stable/Release", { kind: "cached", freshness: "metadata", transform: "release" }],
    ["GET", "dists/stable/Release.gpg", { kind: "cached", freshness: "metadata", transform: undefined }],
    ["GET", "dists/stable/main/binary-amd64/Packages.xz", { kind: "cached", freshness: "metadata", linked: true, transform: "packages" }],
    ["GET", "dists/stable/main/binary-amd64/Packages", { linked: true, transform: "packages" }],
    ["GET", "dists/stable/main/source/Sources.gz", { linked: true, transform: undefined }],
    ["GET", "dists/stable/main/i18n/Translation-en.bz2", { linked: true, transform: undefined }],
    ["GET", "dists/stable/main/Contents-amd64.gz", { linked: true }],
    ["GET", "dists/stable/main/dep11/Components-amd64.yml.gz", { linked: true }],
    ["GET", `dists/stable/main/binary-amd64/by-hash/SHA256/${hex}`, { kind: "cached", freshness: "immutable", expectedDigest: `sha256:${hex}`, transform: "packages" }],
    ["GET", `dists/stable/main/binary-amd64/by-hash/SHA512/${"cd".repeat(64)}`, { expectedDigest: `sha512:${"cd".repeat(64)}` }],
    ["GET", `by-hash/MD5Sum/${"ef".repeat(16)}`, { kind: "cached", freshness: "immutable", expectedDigest: undefined }],
    ["GET", "dists/stable/main/binary-amd64/by-hash/SHA256/abc", { kind: "invalid", status: 404 }],
    ["GET", "pool/main/h/hello/hello_2.10-3_amd64.deb", { kind: "cached", freshness: "immutable", linked: true, upstreamPath: "pool/main/h/hello/hello_2.10-3_amd64.deb" }],
    ["GET", "InRelease", { kind: "cached", transform: "release" }],
    ["GET", "Packages.gz", { kind: "cached", linked: true, transform: "packages" }],
    ["GET", "flat_1.0_all.deb", { kind: "cached", freshness: "immutable", linked: true }],
    ["GET", "", { kind: "invalid", status: 404 }],
    ["GET", "dists/", { kind: "invalid", status: 404 }],
    ["POST", "dists/stable/InRelease", { kind: "invalid", status: 405 }]
  ]
  for (const [method, path, expected] of cases) t.match(classify(method, path), expected, `${method} ${JSON.stringify(path)}`)
})

const release = `-----BEGIN PGP SIGNED MESSAGE-----
Hash: SHA512

Origin: Debian
Suite: stable
Acquire-By-Hash: yes
MD5Sum:
 ${"0".repeat(32)}   100 main/binary-amd64/Packages
SHA256:
 ${hex}   1234 main/binary-amd64/Packages.xz
 ${"CD".repeat(32)}  99 main/i18n/Translation-en
 ${"ef".repeat(32)}  5 ../../etc/passwd
 not-a-line
Description: after the list
-----BEGIN PGP SIGNATURE-----
 ${"11".repeat(32)} 1 main/forged
-----END PGP SIGNATURE-----
`

t.test("parseRelease", async (t) => {
  const parsed = parseRelease(release)
  t.equal(parsed.byHash, true)
  t.same(parsed.files.map((f) => [f.path, f.size]), [["main/binary-amd64/Packages.xz", 1234], ["main/i18n/Translation-en", 99], ["../../etc/passwd", 5]], "only the SHA256 list, nothing after the signature starts")
  t.equal(parsed.files[1].sha256, "cd".repeat(32), "lower-cased")
  t.equal(parseRelease("Origin: x\nSHA256:\n").byHash, false)
})

t.test("releaseLinks", async (t) => {
  const links = releaseLinks(release, "dists/stable/InRelease", remote)
  t.same(links, [
    { key: "dists/stable/main/binary-amd64/Packages.xz", url: `${remote}dists/stable/main/binary-amd64/by-hash/SHA256/${hex}`, digest: `sha256:${hex}`, size: 1234 },
    { key: "dists/stable/main/i18n/Translation-en", url: `${remote}dists/stable/main/i18n/by-hash/SHA256/${"cd".repeat(32)}`, digest: `sha256:${"cd".repeat(32)}`, size: 99 }
  ], "fetched by hash; a path with dot segments is dropped")
  const plain = releaseLinks(release.replace("Acquire-By-Hash: yes", "Acquire-By-Hash: no"), "InRelease", remote)
  t.equal(plain[0].key, "main/binary-amd64/Packages.xz", "flat repository: relative to the top")
  t.equal(plain[0].url, `${remote}main/binary-amd64/Packages.xz`, "no by-hash: the plain path")
})

t.test("packagesRoot", async (t) => {
  t.equal(packagesRoot("dists/stable/main/binary-amd64/Packages.xz"), "")
  t.equal(packagesRoot(`dists/stable/main/binary-amd64/by-hash/SHA256/${hex}`), "")
  t.equal(packagesRoot("Packages.gz"), "")
  t.equal(packagesRoot(`by-hash/SHA256/${hex}`), "")
  t.equal(packagesRoot("sub/dir/Packages"), "sub/dir")
  t.equal(packagesRoot(`sub/by-hash/SHA256/${hex}`), "sub")
})

const packages = `Package: hello
Version: 2.10
Description: multi-line
 continuation: Filename: not/this.deb
Filename: pool/main/h/hello/hello_2.10_amd64.deb
Size: 1000
SHA256: ${hex.toUpperCase()}

Package: nosize
Filename: ./flat_1.0_all.deb

Package: evil
Filename: pool/../../etc/shadow
SHA256: ${hex}
`

t.test("parseStanzas", async (t) => {
  const lines = async function*() {
    yield* packages.split("\n")
  }
  const stanzas = []
  for await (const stanza of parseStanzas(lines())) stanzas.push(stanza)
  t.same(stanzas, [
    { filename: "pool/main/h/hello/hello_2.10_amd64.deb", size: 1000, sha256: hex.toUpperCase() },
    { filename: "./flat_1.0_all.deb", size: undefined, sha256: undefined },
    { filename: "pool/../../etc/shadow", size: undefined, sha256: hex }
  ], "continuation lines are not fields")
})

t.test("packagesLinks in every compression; other files are not read", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "larder-apt-unit-"))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, "Packages"), packages)
  writeFileSync(join(dir, "Packages.gz"), gzipSync(packages))
  await promisify(execFile)("xz", ["-k", join(dir, "Packages")])
  writeFileSync(join(dir, "Translation"), "Package: x\nDescription-md5: 1\n")
  writeFileSync(join(dir, "Contents"), gzipSync("usr/bin/hello  utils/hello\n"))
  const expected = [
    { key: "pool/main/h/hello/hello_2.10_amd64.deb", url: `${remote}pool/main/h/hello/hello_2.10_amd64.deb`, digest: `sha256:${hex}`, size: 1000 },
    { key: "flat_1.0_all.deb", url: `${remote}flat_1.0_all.deb`, digest: undefined, size: undefined }
  ]
  for (const name of ["Packages", "Packages.gz", "Packages.xz"]) {
    t.same(await packagesLinks(join(dir, name), "", remote), expected, `${name}: traversal dropped, ./ removed, hash lower-cased`)
  }
  t.same((await packagesLinks(join(dir, "Packages"), "sub", remote))[1].key, "sub/flat_1.0_all.deb", "relative to a flat repository's directory")
  t.same(await packagesLinks(join(dir, "Translation"), "", remote), [], "stanzas without Filename give nothing")
  t.same(await packagesLinks(join(dir, "Contents"), "", remote), [], "not a Packages file: not read")
  t.equal(compressionOf(Buffer.from("BZh91AY")), "bzip2")
  t.equal(compressionOf(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0])), "zstd")
})
