// The npm registry API as a read-only pull-through proxy: packuments (full, and the abbreviated
// "corgi" form npm install asks for, cached apart) are metadata whose tarball URLs are rewritten
// to larder; tarballs never change and are checked against the packument's `dist.integrity`
// (sha512) or `shasum` (sha1). Publishing, login and audit cannot work through a proxy and say so
// in npm's error shape.
import type { Repository } from "../../../appliance/config/Repository.ts"
import { contentPath, digestFromIntegrity, hexDigest, publicUrl, resolveUrl } from "../links.ts"
import { upstreamUrl } from "../path.ts"
import type { FormatRules, Link, Route } from "../route.ts"

export const abbreviatedType = "application/vnd.npm.install-v1+json"

// package names: lower-case (old packages may have upper-case), URL-safe, optionally @scope/
const segment = "[A-Za-z0-9~-][A-Za-z0-9._~-]*"
const packageName = new RegExp(`^(?:@${segment}/)?${segment}$`)

const readOnly = (method: string, path: string): Route => ({
  kind: "invalid",
  status: 405,
  message: `${method} /${path} is not available: larder's npm repository is a read-only proxy (publish, login, audit and other writes go to the real registry)`
})

export const classify = (method: string, path: string, accept?: string | undefined): Route => {
  if (method !== "GET" && method !== "HEAD") return readOnly(method, path)
  if (path === "-/ping") return { kind: "answer", status: 200, headers: { "content-type": "application/json" }, body: "{}" }
  const distTags = /^-\/package\/(.+)\/dist-tags$/.exec(path)
  if (distTags !== null && packageName.test(distTags[1])) return { kind: "cached", key: path, upstreamPath: path, freshness: "metadata" }
  if (path.startsWith("-/") || path === "") {
    return { kind: "invalid", status: 404, message: `/${path} is not served by larder's npm proxy (only packuments, dist-tags and tarballs are)` }
  }
  if (path.startsWith("_upstream/")) {
    // a tarball a packument placed on another host: fetched only at the URL the packument named
    return { kind: "cached", key: path, upstreamPath: "", freshness: "immutable", linked: true }
  }
  const tarball = /^((?:@[^/]+\/)?[^/@][^/]*)\/-\/[^/]+\.tgz$/.exec(path)
  if (tarball !== null && packageName.test(tarball[1])) {
    return { kind: "cached", key: path, upstreamPath: path, freshness: "immutable", linked: true }
  }
  if (!packageName.test(path)) return { kind: "invalid", status: 404, message: `"${path}" is not a package name` }
  const abbreviated = accept?.includes(abbreviatedType) ?? false
  return {
    kind: "cached",
    // "?" never reaches a path (it starts the query), so the abbreviated key cannot be requested
    key: abbreviated ? `${path}?abbreviated` : path,
    upstreamPath: path,
    freshness: "metadata",
    transform: "packument",
    upstreamHeaders: { accept: abbreviated ? `${abbreviatedType}, application/json;q=0.8` : "application/json" }
  }
}

interface Packument {
  versions?: Record<string, { dist?: { tarball?: unknown; integrity?: unknown; shasum?: unknown } } | null>
  [field: string]: unknown
}

const readPackument = (body: Buffer): Packument => {
  const packument = JSON.parse(body.toString()) as unknown
  if (packument === null || typeof packument !== "object" || Array.isArray(packument)) throw new Error("packument is not a JSON object")
  return packument as Packument
}

const dists = function*(packument: Packument) {
  for (const version of Object.values(packument.versions ?? {})) {
    const dist = version?.dist
    if (dist !== null && typeof dist === "object" && typeof dist.tarball === "string") yield dist as { tarball: string; integrity?: unknown; shasum?: unknown }
  }
}

/** a packument with every tarball URL pointing at larder */
export const rewritePackument = (body: Buffer, packumentUrl: string, remoteUrl: string, base: string): Buffer => {
  const packument = readPackument(body)
  for (const dist of dists(packument)) {
    const resolved = resolveUrl(dist.tarball, packumentUrl)
    const path = resolved === undefined ? undefined : contentPath(resolved, remoteUrl)
    if (path !== undefined) dist.tarball = publicUrl(base, path)
  }
  return Buffer.from(JSON.stringify(packument))
}

/** a link per version's tarball: its upstream URL and integrity (sha512) or shasum (sha1) */
export const packumentLinks = (body: Buffer, packumentUrl: string, remoteUrl: string): Array<Link> => {
  const links: Array<Link> = []
  for (const dist of dists(readPackument(body))) {
    const url = resolveUrl(dist.tarball, packumentUrl)
    const key = url === undefined ? undefined : contentPath(url, remoteUrl)
    if (key === undefined) continue
    const digest = (typeof dist.integrity === "string" ? digestFromIntegrity(dist.integrity) : undefined) ??
      (typeof dist.shasum === "string" ? hexDigest("sha1", dist.shasum) : undefined)
    links.push({ key, url: url!, digest })
  }
  return links
}

export const npmRules = (repository: Repository): FormatRules => {
  const remoteUrl = repository.proxy.remoteUrl
  return {
    classify,
    errorStyle: "json",
    forwardQuery: false,
    rewrite: (_transform, body, context) => rewritePackument(body, upstreamUrl(remoteUrl, context.path), remoteUrl, context.base),
    links: async (_transform, context) => packumentLinks(await context.read(), upstreamUrl(remoteUrl, context.path), remoteUrl)
  }
}
