// An npm registry fixture: real package tarballs (gzipped tar under package/) and packuments with
// integrity (sha512) and shasum, in full and abbreviated form, on a counting upstream.
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { tempDir } from "./appliance.ts"
import type { Upstream } from "./upstream.ts"

const run = promisify(execFile)

export interface PackageVersion {
  readonly name: string
  readonly version: string
  readonly dependencies?: Record<string, string>
  /** index.js */
  readonly main?: string
}

/** a tarball as `npm pack` makes it: package/package.json and package/index.js */
export const packTarball = async (pkg: PackageVersion): Promise<Buffer> => {
  const dir = tempDir("larder-npmpack-")
  try {
    await mkdir(join(dir, "package"))
    await writeFile(join(dir, "package", "package.json"), JSON.stringify({ name: pkg.name, version: pkg.version, main: "index.js", dependencies: pkg.dependencies ?? {} }))
    await writeFile(join(dir, "package", "index.js"), pkg.main ?? `module.exports = ${JSON.stringify(`${pkg.name}@${pkg.version}`)}\n`)
    await run("tar", ["-czf", join(dir, "pkg.tgz"), "-C", dir, "package"])
    return await readFile(join(dir, "pkg.tgz"))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const tarballName = (name: string, version: string) => `${name.split("/").at(-1)}-${version}.tgz`

/**
 * Registers packuments (at /<name>, answering the abbreviated form for npm install's Accept) and
 * tarballs (at /<name>/-/<file>). `tamper` names packages whose tarball bytes differ from what
 * their integrity says. Returns the tarball bytes by "<name>@<version>".
 */
export const servePackages = async (upstream: Upstream, packages: ReadonlyArray<PackageVersion>, tamper: ReadonlyArray<string> = []) => {
  const tarballs = new Map<string, Buffer>()
  const byName = new Map<string, Array<PackageVersion>>()
  for (const pkg of packages) byName.set(pkg.name, [...(byName.get(pkg.name) ?? []), pkg])
  for (const [name, versions] of byName) {
    const full: Record<string, unknown> = {}
    const abbreviated: Record<string, unknown> = {}
    for (const pkg of versions) {
      const bytes = await packTarball(pkg)
      tarballs.set(`${name}@${pkg.version}`, bytes)
      const path = `/${name}/-/${tarballName(name, pkg.version)}`
      upstream.routes.set(path, { body: tamper.includes(name) ? Buffer.concat([bytes, Buffer.alloc(1)]) : bytes, headers: { "content-type": "application/octet-stream" } })
      const dist = {
        tarball: `${upstream.url}${path}`,
        integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
        shasum: createHash("sha1").update(bytes).digest("hex")
      }
      full[pkg.version] = { name, version: pkg.version, dependencies: pkg.dependencies ?? {}, description: `fixture ${name}`, dist }
      abbreviated[pkg.version] = { name, version: pkg.version, dependencies: pkg.dependencies ?? {}, dist }
    }
    const latest = versions.at(-1)!.version
    const fullBody = JSON.stringify({ name, "dist-tags": { latest }, versions: full, time: { modified: "2026-01-01T00:00:00.000Z" } })
    const corgiBody = JSON.stringify({ name, "dist-tags": { latest }, versions: abbreviated, modified: "2026-01-01T00:00:00.000Z" })
    const fullRoute = { body: fullBody, headers: { "content-type": "application/json", etag: `"full-${name}"` } }
    const corgiRoute = { body: corgiBody, headers: { "content-type": "application/vnd.npm.install-v1+json", etag: `"corgi-${name}"` } }
    upstream.routes.set(`/${name}`, { ...fullRoute, negotiate: (accept) => (accept?.includes("application/vnd.npm.install-v1+json") ? corgiRoute : fullRoute) })
  }
  return tarballs
}
