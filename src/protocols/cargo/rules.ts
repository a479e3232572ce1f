// Cargo's sparse registry protocol: `config.json` names where crates download from (`dl`), and one
// index file per crate (1/a, 2/ab, 3/a/abc, ab/cd/abcd...) lists every version with its sha256
// `cksum`. larder serves config.json with `dl` pointing at itself (and no `api`: a proxy cannot
// publish), revalidates index files, and verifies each .crate against the index's cksum.
import type { Repository } from "../../../appliance/config/Repository.ts"
import { hexDigest } from "../links.ts"
import { upstreamUrl } from "../path.ts"
import type { FormatRules, Link, Route } from "../route.ts"

const invalid = (message: string, status = 400): Route => ({ kind: "invalid", status, message })

// crate names: ASCII letters, digits, - and _ (cargo's own limit); the index uses them lower-cased
const crateName = /^[a-z0-9_-]{1,64}$/

/** the index directory of a (lower-case) crate name, as the sparse layout places it */
export const indexPath = (name: string): string =>
  name.length === 1
    ? `1/${name}`
    : name.length === 2
    ? `2/${name}`
    : name.length === 3
    ? `3/${name[0]}/${name}`
    : `${name.slice(0, 2)}/${name.slice(2, 4)}/${name}`

export const classify = (method: string, path: string): Route => {
  if (method !== "GET" && method !== "HEAD") return invalid(`${method} is not supported: the cargo proxy is read-only (no publish)`, 405)
  if (path === "config.json") return { kind: "cached", key: path, upstreamPath: path, freshness: "metadata", transform: "config" }
  const download = /^crates\/([^/]+)\/([^/]+)\/download$/.exec(path)
  if (download !== null) {
    // the upstream URL and checksum come from the index line of that version
    return { kind: "cached", key: path, upstreamPath: "", freshness: "immutable", linked: true }
  }
  const name = path.split("/").at(-1) ?? ""
  if (!crateName.test(name) || indexPath(name) !== path) {
    return invalid(`not a sparse index path: ${path} (expected config.json, an index file such as 3/s/syn or se/rd/serde, or crates/<name>/<version>/download)`, 404)
  }
  return { kind: "cached", key: path, upstreamPath: path, freshness: "metadata", transform: "index" }
}

interface RegistryConfig {
  dl?: unknown
  api?: unknown
  [field: string]: unknown
}

const readConfig = (body: Buffer): RegistryConfig => {
  const config = JSON.parse(body.toString()) as unknown
  if (config === null || typeof config !== "object" || Array.isArray(config)) throw new Error("config.json is not an object")
  return config as RegistryConfig
}

/** config.json for clients: downloads through larder, no API (publishing through a proxy cannot work) */
export const rewriteConfig = (body: Buffer, base: string): Buffer => {
  const { api: _api, ...config } = readConfig(body)
  return Buffer.from(JSON.stringify({ ...config, dl: `${base}/crates` }))
}

/**
 * A crate's download URL from the registry's `dl` template: markers replaced, or, without
 * markers, `/{crate}/{version}/download` appended (cargo's rule).
 */
export const downloadUrl = (template: string, name: string, version: string, cksum: string): string => {
  const markers = ["{crate}", "{version}", "{prefix}", "{lowerprefix}", "{sha256-checksum}"]
  if (!markers.some((marker) => template.includes(marker))) return `${template.replace(/\/$/, "")}/${name}/${version}/download`
  const prefix = indexPath(name).split("/").slice(0, -1).join("/")
  return template
    .replaceAll("{crate}", name)
    .replaceAll("{version}", version)
    .replaceAll("{prefix}", prefix)
    .replaceAll("{lowerprefix}", prefix.toLowerCase())
    .replaceAll("{sha256-checksum}", cksum)
}

/** a link per version line of an index file: where the upstream serves that .crate and its cksum */
export const indexLinks = (body: Buffer, template: string): Array<Link> => {
  const links: Array<Link> = []
  for (const line of body.toString().split("\n")) {
    if (line.trim() === "") continue
    let entry: { name?: unknown; vers?: unknown; cksum?: unknown }
    try {
      entry = JSON.parse(line)
    } catch {
      continue // a line this version of the protocol does not know: cargo skips it too
    }
    if (typeof entry.name !== "string" || typeof entry.vers !== "string" || typeof entry.cksum !== "string") continue
    const digest = hexDigest("sha256", entry.cksum)
    if (digest === undefined) continue
    // names keep the publisher's case in the line; larder's key uses what cargo requests (the line's name)
    links.push({
      key: `crates/${entry.name}/${entry.vers}/download`,
      url: downloadUrl(template, entry.name, entry.vers, digest.slice(7)),
      digest
    })
  }
  return links
}

export const cargoRules = (repository: Repository): FormatRules => ({
  classify,
  errorStyle: "text",
  forwardQuery: false,
  rewrite: (_transform, body, context) => rewriteConfig(body, context.base),
  rewrites: ["config"],
  links: async (transform, context) => {
    if (transform !== "index") return []
    const config = await context.cached("config.json")
    // cargo always reads config.json before any index file; without it the default dl is the
    // upstream's own crates/ path
    const dl = config === undefined ? undefined : readConfig(config).dl
    const template = typeof dl === "string" ? dl : upstreamUrl(repository.proxy.remoteUrl, "crates")
    return indexLinks(await context.read(), template)
  }
})

