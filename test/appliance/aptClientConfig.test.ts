// client-config apt: larder.sources from the client's sources (deb822 and one-line), and --apply /
// --revert on a private root: idempotent, refusing what it did not write, and a round trip that
// leaves the directory byte-identical.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import t from "tap"
import { snapshotTree } from "../support/files.ts"
import { applyAptSources, readAptSourcesFiles, revertAptSources } from "../../appliance/clientConfig/aptApply.ts"
import { disabledBy, renderLarderSources } from "../../appliance/clientConfig/aptSources.ts"
import { parseLanHost } from "../../appliance/clientConfig/lanHost.ts"
import { parseDeb822Sources, parseOneLineSources } from "../../appliance/config/aptSources.ts"
import { tempDir } from "../support/appliance.ts"

const lan = parseLanHost("10.0.0.5:8081")
const scratch = tempDir("larder-apt-config-")
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))

const debianSources = `Types: deb
# a snapshot of the archive
URIs: http://archive.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb deb-src
URIs: http://archive.example/debian-security
Suites: bookworm-security
Components: main
Architectures: amd64 arm64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: https://vendor.example/apt
Suites: stable
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGRlarder
 -----END PGP PUBLIC KEY BLOCK-----
`

t.test("parsers: deb822 fields, comments and continuation lines; one-line options in deb822 spelling", async (t) => {
  const entries = parseDeb822Sources(debianSources)
  t.equal(entries.length, 3)
  t.same(entries[0].suites, ["bookworm", "bookworm-updates"])
  t.same(entries[1].types, ["deb", "deb-src"])
  t.same(entries[1].options, [["Architectures", "amd64 arm64"], ["Signed-By", "/usr/share/keyrings/debian-archive-keyring.gpg"]])
  t.match(entries[2].options[0][1], /^\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n \.\n mQINBGRlarder\n -----END/, "an embedded key keeps its lines")
  const lines = parseOneLineSources(
    "# comment\ndeb [arch=amd64,arm64 signed-by=/k.gpg] http://archive.example/debian bookworm main non-free\ndeb-src http://archive.example/debian bookworm main\n\ndeb http://x/ y # trailing\n"
  )
  t.same(lines.map((entry) => [entry.types, entry.uris, entry.suites, entry.components, entry.options]), [
    [["deb"], ["http://archive.example/debian"], ["bookworm"], ["main", "non-free"], [["Architectures", "amd64 arm64"], ["Signed-By", "/k.gpg"]]],
    [["deb-src"], ["http://archive.example/debian"], ["bookworm"], ["main"], []],
    [["deb"], ["http://x/"], ["y"], [], []]
  ])
})

t.test("larder.sources: archives through larder with their suites, components and Signed-By; other stanzas kept", async (t) => {
  const { text, disable } = renderLarderSources([{ path: "sources.list.d/debian.sources", text: debianSources }], lan)
  t.same(disable, ["sources.list.d/debian.sources"])
  t.same(disabledBy(text), ["sources.list.d/debian.sources"], "what will be renamed is recorded in the file")
  const entries = parseDeb822Sources(text)
  t.same(entries.map((entry) => entry.uris[0]), [
    "http://10.0.0.5:8081/repository/apt-distro/",
    "http://10.0.0.5:8081/repository/apt-distro-security/",
    "https://vendor.example/apt"
  ])
  t.same(entries[0].suites, ["bookworm", "bookworm-updates"])
  t.same(entries[0].components, ["main", "contrib"])
  t.same(entries[0].options, [["Signed-By", "/usr/share/keyrings/debian-archive-keyring.gpg"]], "Signed-By kept from the system's file")
  t.same(entries[1].types, ["deb", "deb-src"], "source packages too")
  t.same(entries[1].options, parseDeb822Sources(debianSources)[1].options)
  t.same(entries[2], { ...parseDeb822Sources(debianSources)[2], text: entries[2].text }, "a vendor stanza larder does not proxy is copied as it was")
  t.match(text, /^# from sources.list.d\/debian.sources, not through larder\nTypes: deb\nURIs: https:\/\/vendor.example\/apt/m)
})

t.test("larder.sources from a one-line sources.list; files without the archives are left alone", async (t) => {
  const { text, disable } = renderLarderSources([
    { path: "sources.list", text: "deb [signed-by=/k.gpg] http://archive.example/ubuntu jammy main universe\ndeb http://archive.example/ubuntu jammy-security main\n" },
    { path: "sources.list.d/docker.list", text: "deb https://download.example/linux/debian bookworm stable\n" }
  ], lan)
  t.same(disable, ["sources.list"], "only the file with the archives")
  const entries = parseDeb822Sources(text)
  t.same(entries.map((entry) => [entry.uris[0], entry.suites[0], entry.components, entry.options]), [
    ["http://10.0.0.5:8081/repository/apt-distro/", "jammy", ["main", "universe"], [["Signed-By", "/k.gpg"]]],
    ["http://10.0.0.5:8081/repository/apt-distro-security/", "jammy-security", ["main"], []]
  ])
})

t.test("no archive at all is an error that says so", async (t) => {
  t.throws(() => renderLarderSources([], lan), /no distribution archive in the apt sources \(none found\)/)
  t.throws(() => renderLarderSources([{ path: "sources.list", text: "# nothing\n" }], lan), /no distribution archive in sources.list/)
})

t.test("disabledBy only names files apt reads, so an edited marker renames nothing else", async (t) => {
  const text = [
    "# larder-disabled: sources.list.d/debian.sources",
    "# larder-disabled: ../../etc/shadow",
    "# larder-disabled: sources.list.d/../../x.list",
    "# larder-disabled: sources.list.d/larder.sources",
    "# larder-disabled: sources.list"
  ].join("\n")
  t.same(disabledBy(text), ["sources.list.d/debian.sources", "sources.list"])
})

const snapshot = snapshotTree

const makeRoot = (name: string) => {
  const root = join(scratch, name)
  mkdirSync(join(root, "etc/apt/sources.list.d"), { recursive: true })
  writeFileSync(join(root, "etc/apt/sources.list.d/debian.sources"), debianSources, { mode: 0o644 })
  writeFileSync(join(root, "etc/apt/sources.list.d/vendor.list"), "deb https://vendor.example/apt stable main\n", { mode: 0o600 })
  writeFileSync(join(root, "etc/apt/sources.list.d/old.list.disabled-by-admin"), "deb http://old/ x main\n")
  writeFileSync(join(root, "etc/apt/sources.list"), "# See sources.list.d\n")
  return root
}

t.test("--apply writes larder.sources and disables the archive's file; again: unchanged; --revert: byte-identical", async (t) => {
  const root = makeRoot("round-trip")
  const before = snapshot(root)

  const applied = await applyAptSources(root, lan)
  t.match(applied[0], /^wrote .*etc\/apt\/sources.list.d\/larder.sources$/)
  t.match(applied[1], /^renamed .*debian.sources to debian.sources.disabled$/)
  const after = snapshot(root)
  t.same(Object.keys(after).sort(), [
    "etc/apt/sources.list",
    "etc/apt/sources.list.d/debian.sources.disabled",
    "etc/apt/sources.list.d/larder.sources",
    "etc/apt/sources.list.d/old.list.disabled-by-admin",
    "etc/apt/sources.list.d/vendor.list"
  ])
  t.equal(after["etc/apt/sources.list.d/debian.sources.disabled"], before["etc/apt/sources.list.d/debian.sources"], "the original is renamed, not rewritten")
  const written = readFileSync(join(root, "etc/apt/sources.list.d/larder.sources"), "utf8")
  t.match(written, /URIs: http:\/\/10.0.0.5:8081\/repository\/apt-distro\/\n/)

  t.same(await applyAptSources(root, lan), [`unchanged: ${join(root, "etc/apt/sources.list.d/larder.sources")} already points at http://10.0.0.5:8081`], "idempotent")
  t.same(snapshot(root), after, "the second --apply changed nothing")

  const moved = await applyAptSources(root, parseLanHost("10.0.0.6:8081"))
  t.same(moved.length, 1, "a new LAN host rewrites larder.sources only")
  t.match(readFileSync(join(root, "etc/apt/sources.list.d/larder.sources"), "utf8"), /10\.0\.0\.6:8081\/repository\/apt-distro\//, "read from the .disabled original")

  const reverted = await revertAptSources(root)
  t.match(reverted.join("\n"), /renamed .*debian.sources.disabled back\nremoved .*larder.sources/)
  t.same(snapshot(root), before, "the directory is byte-identical to the start")
  t.same(await revertAptSources(root), [`nothing to revert: no ${join(root, "etc/apt/sources.list.d/larder.sources")}`], "--revert twice is harmless")
  t.same(snapshot(root), before)
})

t.test("--apply and --revert refuse rather than lose a file", async (t) => {
  const root = makeRoot("refusals")
  writeFileSync(join(root, "etc/apt/sources.list.d/larder.sources"), "Types: deb\nURIs: http://mine/\nSuites: x\n")
  await t.rejects(applyAptSources(root, lan), /larder.sources exists and was not written by larder; move it away first/)
  await t.rejects(revertAptSources(root), /not written by larder/)
  rmSync(join(root, "etc/apt/sources.list.d/larder.sources"))

  writeFileSync(join(root, "etc/apt/sources.list.d/debian.sources.disabled"), "an older copy\n")
  const before = snapshot(root)
  await t.rejects(applyAptSources(root, lan), /both .*debian.sources and sources.list.d\/debian.sources.disabled exist; remove one/)
  t.same(snapshot(root), before, "nothing was written")
})

t.test("the files are read in apt's order, a disabled one from its .disabled copy", async (t) => {
  const root = makeRoot("order")
  await applyAptSources(root, lan)
  const files = await readAptSourcesFiles(root, ["sources.list.d/debian.sources"])
  t.same(files.map((file) => file.path), ["sources.list", "sources.list.d/debian.sources", "sources.list.d/vendor.list"])
  t.equal(files[1].text, debianSources)
})

t.test("one URI for both archives (Ubuntu's jammy and jammy-security): told apart by suite", async (t) => {
  const { text } = renderLarderSources([
    { path: "sources.list.d/ubuntu.sources", text: "Types: deb\nURIs: http://archive.example/ubuntu\nSuites: jammy jammy-updates jammy-security\nComponents: main\n" }
  ], lan)
  t.same(parseDeb822Sources(text).map((entry) => [entry.uris[0], entry.suites]), [
    ["http://10.0.0.5:8081/repository/apt-distro/", ["jammy", "jammy-updates"]],
    ["http://10.0.0.5:8081/repository/apt-distro-security/", ["jammy-security"]]
  ])
})
