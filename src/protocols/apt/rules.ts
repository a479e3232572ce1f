// Debian archives (and flat repositories) as apt sees them. InRelease/Release are metadata; the
// index files they list are pinned to the SHA256 and size the Release names (fetched by hash when
// the archive offers it), so a client never gets an index that does not match the Release larder
// served it; `by-hash/` files are addressed by their own hash; packages in pool/ never change and
// are checked against the SHA256 and size in the Packages index that listed them.
import type { Repository } from "../../../appliance/config/Repository.ts"
import { hexDigest } from "../links.ts"
import { upstreamUrl } from "../path.ts"
import type { FormatRules, Link, Route } from "../route.ts"
import { packagesLinks } from "./packages.ts"

const indexFile = /^(?:Packages|Sources|Contents-[^/]+|Translation-[^/]+|Components-[^/]+|Commands-[^/]+|icons-[^/]+|Index)(?:\.(?:gz|xz|bz2|lzma|zst))?$/

const dirname = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "")
const join = (dir: string, path: string) => (dir === "" ? path : `${dir}/${path}`)

export const classify = (method: string, path: string): Route => {
  if (method !== "GET" && method !== "HEAD") {
    return { kind: "invalid", status: 405, message: `${method} is not supported: apt repositories in larder are read-only proxies` }
  }
  if (path === "" || path.endsWith("/")) return { kind: "invalid", status: 404, message: `${path || "/"} is a directory; apt asks for files` }
  const name = path.slice(path.lastIndexOf("/") + 1)
  const byHash = /(?:^|\/)by-hash\/(MD5Sum|SHA1|SHA256|SHA512)\/([0-9a-f]+)$/.exec(path)
  if (byHash !== null) {
    const algorithm = byHash[1] === "SHA256" ? "sha256" : byHash[1] === "SHA512" ? "sha512" : undefined
    const expectedDigest = algorithm === undefined ? undefined : hexDigest(algorithm, byHash[2])
    if (algorithm !== undefined && expectedDigest === undefined) return { kind: "invalid", status: 404, message: `malformed ${byHash[1]} hash in ${path}` }
    // its name says what it must hash to; whether it is a Packages file is seen when it is read
    return { kind: "cached", key: path, upstreamPath: path, freshness: "immutable", expectedDigest, transform: "packages" }
  }
  if (name === "InRelease" || name === "Release") {
    return { kind: "cached", key: path, upstreamPath: path, freshness: "metadata", transform: "release" }
  }
  if (name === "Release.gpg") return { kind: "cached", key: path, upstreamPath: path, freshness: "metadata" }
  if (indexFile.test(name) || path.startsWith("dists/")) {
    // pinned by the Release's link when larder has one; revalidated like metadata otherwise
    return {
      kind: "cached",
      key: path,
      upstreamPath: path,
      freshness: "metadata",
      linked: true,
      transform: name.startsWith("Packages") ? "packages" : undefined
    }
  }
  // packages and source files (pool/ or a flat repository's directory)
  return { kind: "cached", key: path, upstreamPath: path, freshness: "immutable", linked: true }
}

export interface ReleaseIndex {
  readonly byHash: boolean
  readonly files: ReadonlyArray<{ readonly path: string; readonly sha256: string; readonly size: number }>
}

/** the SHA256 list and Acquire-By-Hash of a Release or InRelease (clear-signed) file */
export const parseRelease = (text: string): ReleaseIndex => {
  const files: Array<ReleaseIndex["files"][number]> = []
  let byHash = false
  let section = ""
  for (const line of text.split("\n")) {
    if (line.startsWith("-----BEGIN PGP SIGNATURE")) break
    if (line.startsWith(" ") || line.startsWith("\t")) {
      if (section !== "sha256") continue
      const match = /^\s+([0-9a-fA-F]{64})\s+(\d+)\s+(\S+)\s*$/.exec(line)
      if (match !== null) files.push({ sha256: match[1].toLowerCase(), size: Number(match[2]), path: match[3] })
      continue
    }
    const field = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line)
    if (field === null) {
      section = ""
      continue
    }
    section = field[1].toLowerCase()
    if (section === "acquire-by-hash") byHash = field[2].trim().toLowerCase() === "yes"
  }
  return { byHash, files }
}

/** links for every index file a Release lists (at `releasePath`), by hash when the archive has it */
export const releaseLinks = (text: string, releasePath: string, remoteUrl: string): Array<Link> => {
  const release = parseRelease(text)
  const dir = dirname(releasePath)
  const links: Array<Link> = []
  for (const file of release.files) {
    if (file.path.split("/").some((segment) => segment === ".." || segment === ".")) continue
    const key = join(dir, file.path)
    const fetchPath = release.byHash ? join(dir, join(dirname(file.path), `by-hash/SHA256/${file.sha256}`)) : key
    links.push({ key, url: upstreamUrl(remoteUrl, fetchPath), digest: `sha256:${file.sha256}`, size: file.size })
  }
  return links
}

/** the directory Filename fields are relative to: the archive root, or a flat repository's directory */
export const packagesRoot = (packagesPath: string): string => {
  if (packagesPath.startsWith("dists/") || packagesPath.includes("/dists/")) return packagesPath.slice(0, packagesPath.indexOf("dists/")).replace(/\/$/, "")
  const withoutHash = packagesPath.replace(/(?:^|\/)by-hash\/[^/]+\/[^/]+$/, "")
  return withoutHash === packagesPath ? dirname(packagesPath) : withoutHash
}

export const aptRules = (repository: Repository): FormatRules => ({
  classify,
  errorStyle: "text",
  forwardQuery: false,
  links: async (transform, context) => {
    if (transform === "release") return releaseLinks((await context.read()).toString(), context.path, repository.proxy.remoteUrl)
    return packagesLinks(context.file, packagesRoot(context.path), repository.proxy.remoteUrl)
  }
})
