// A signed apt archive fixture: a throw-away gpg key, tiny real .deb packages (dpkg-deb), Packages
// indexes in three compressions, a Release with by-hash copies, clear-signed InRelease and
// Release.gpg; laid out as a Debian archive (dists/ + pool/) or as a flat repository. Served from
// a counting upstream, every file with an ETag.
import { execFile } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises"
import { join, relative } from "node:path"
import { promisify } from "node:util"
import { gzipSync } from "node:zlib"
import { tempDir } from "./appliance.ts"
import type { Upstream } from "./upstream.ts"

const run = promisify(execFile)
const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex")

export interface DebPackage {
  readonly name: string
  readonly version: string
  readonly depends?: string
  /** bytes of incompressible filler in the package (benchmarks want realistic sizes) */
  readonly payloadBytes?: number
}

export interface SigningKey {
  readonly home: string
  /** binary public keyring, for Signed-By */
  readonly keyring: string
}

export const makeSigningKey = async (dir: string): Promise<SigningKey> => {
  const home = join(dir, "gnupg")
  await mkdir(home, { mode: 0o700 })
  const gpg = (args: Array<string>) => run("gpg", ["--homedir", home, "--batch", "--quiet", ...args])
  await gpg(["--passphrase", "", "--quick-gen-key", "larder test archive <archive@larder.test>", "ed25519", "sign", "never"])
  const keyring = join(dir, "archive-key.gpg")
  await gpg(["--output", keyring, "--export"])
  return { home, keyring }
}

const buildDeb = async (dir: string, pkg: DebPackage): Promise<Buffer> => {
  const root = join(dir, `${pkg.name}-build`)
  await mkdir(join(root, "DEBIAN"), { recursive: true })
  await mkdir(join(root, "usr/share/doc", pkg.name), { recursive: true })
  await writeFile(join(root, "usr/share/doc", pkg.name, "README"), `${pkg.name} ${pkg.version} from the larder test archive\n`)
  if (pkg.payloadBytes !== undefined) await writeFile(join(root, "usr/share/doc", pkg.name, "payload"), randomBytes(pkg.payloadBytes))
  const control = [
    `Package: ${pkg.name}`,
    `Version: ${pkg.version}`,
    "Architecture: all",
    "Maintainer: larder tests <archive@larder.test>",
    ...(pkg.depends === undefined ? [] : [`Depends: ${pkg.depends}`]),
    `Description: ${pkg.name} test package`,
    " A tiny package built by larder's tests.",
    ""
  ].join("\n")
  await writeFile(join(root, "DEBIAN", "control"), control)
  const deb = join(dir, `${pkg.name}.deb`)
  await run("dpkg-deb", ["--root-owner-group", "-Zgzip", "--build", root, deb])
  await rm(root, { recursive: true, force: true })
  return readFile(deb)
}

const stanza = (pkg: DebPackage, filename: string, deb: Buffer) =>
  [
    `Package: ${pkg.name}`,
    `Version: ${pkg.version}`,
    "Architecture: all",
    "Maintainer: larder tests <archive@larder.test>",
    "Installed-Size: 1",
    ...(pkg.depends === undefined ? [] : [`Depends: ${pkg.depends}`]),
    `Filename: ${filename}`,
    `Size: ${deb.length}`,
    `SHA256: ${sha256(deb)}`,
    `Description: ${pkg.name} test package`,
    ""
  ].join("\n")

export interface Archive {
  /** files by path below the archive root */
  readonly files: Map<string, Buffer>
  /** the .deb bytes by package name */
  readonly debs: Map<string, Buffer>
}

/**
 * Builds an archive. `suite` set: dists/<suite>/main/binary-amd64 + pool/main/...; `suite`
 * undefined: a flat repository (Packages, Release and the debs side by side).
 */
export const buildArchive = async (key: SigningKey, packages: ReadonlyArray<DebPackage>, suite: string | undefined): Promise<Archive> => {
  const dir = tempDir("larder-apt-build-")
  try {
    const files = new Map<string, Buffer>()
    const debs = new Map<string, Buffer>()
    const stanzas: Array<string> = []
    for (const pkg of packages) {
      const deb = await buildDeb(dir, pkg)
      const filename = suite === undefined ? `${pkg.name}_${pkg.version}_all.deb` : `pool/main/${pkg.name[0]}/${pkg.name}/${pkg.name}_${pkg.version}_all.deb`
      files.set(filename, deb)
      debs.set(pkg.name, deb)
      stanzas.push(stanza(pkg, filename, deb))
    }
    const packagesText = Buffer.from(stanzas.join("\n"))
    const indexDir = suite === undefined ? "" : "main/binary-amd64/"
    const releaseDir = suite === undefined ? "" : `dists/${suite}/`
    const indexes: Array<[string, Buffer]> = [
      [`${indexDir}Packages`, packagesText],
      [`${indexDir}Packages.gz`, gzipSync(packagesText)]
    ]
    await writeFile(join(dir, "Packages"), packagesText)
    await run("xz", ["-k", "-z", join(dir, "Packages")])
    indexes.push([`${indexDir}Packages.xz`, await readFile(join(dir, "Packages.xz"))])
    for (const [path, bytes] of indexes) {
      files.set(releaseDir + path, bytes)
      files.set(`${releaseDir}${indexDir}by-hash/SHA256/${sha256(bytes)}`, bytes)
    }
    const release = [
      "Origin: larder-test",
      "Label: larder-test",
      ...(suite === undefined ? [] : [`Suite: ${suite}`, `Codename: ${suite}`, "Architectures: amd64", "Components: main"]),
      `Date: ${new Date(Date.now() - 60_000).toUTCString()}`,
      "Acquire-By-Hash: yes",
      "SHA256:",
      ...indexes.map(([path, bytes]) => ` ${sha256(bytes)} ${String(bytes.length).padStart(8)} ${path}`),
      ""
    ].join("\n")
    await writeFile(join(dir, "Release"), release)
    const gpg = (args: Array<string>) => run("gpg", ["--homedir", key.home, "--batch", "--quiet", "--yes", ...args])
    await gpg(["--digest-algo", "SHA512", "--clearsign", "--output", join(dir, "InRelease"), join(dir, "Release")])
    await gpg(["--digest-algo", "SHA512", "--armor", "--detach-sign", "--output", join(dir, "Release.gpg"), join(dir, "Release")])
    for (const name of ["Release", "InRelease", "Release.gpg"]) files.set(releaseDir + name, await readFile(join(dir, name)))
    return { files, debs }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** serves an archive's files below `prefix`, each with an ETag of its content */
export const serveArchive = (upstream: Upstream, prefix: string, archive: Archive) => {
  for (const [path, bytes] of archive.files) {
    upstream.routes.set(`${prefix}/${path}`, { body: bytes, headers: { etag: `"${sha256(bytes).slice(0, 16)}"` } })
  }
}

/** every file below `dir`, relative, for before/after comparisons */
export const listFiles = async (dir: string): Promise<Array<string>> => {
  const out: Array<string> = []
  const walk = async (current: string) => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = join(current, entry.name)
      if (entry.isDirectory()) await walk(full)
      else out.push(relative(dir, full))
    }
  }
  await walk(dir)
  return out.sort()
}
