// Helm chart repositories: `index.yaml` lists every chart version with its download URLs (relative
// to the index, or absolute, often on another host) and the archive's sha256 `digest`. larder
// serves the index with every URL pointing at itself and verifies each chart against its digest.
import { parse } from "yaml"
import type { Repository } from "../../../appliance/config/Repository.ts"
import { contentPath, hexDigest, publicUrl, resolveUrl } from "../links.ts"
import { upstreamUrl } from "../path.ts"
import type { FormatRules, Link, Route } from "../route.ts"

interface ChartVersion {
  urls?: Array<unknown>
  digest?: unknown
  [field: string]: unknown
}

interface IndexFile {
  entries?: Record<string, Array<ChartVersion>>
  [field: string]: unknown
}

const readIndex = (body: Buffer | string): IndexFile => {
  const index = parse(body.toString(), { maxAliasCount: 0 }) as unknown
  if (index === null || typeof index !== "object" || Array.isArray(index)) throw new Error("index.yaml is not a mapping")
  const entries = (index as IndexFile).entries
  if (entries !== undefined && (entries === null || typeof entries !== "object")) throw new Error("index.yaml `entries` is not a mapping")
  return index as IndexFile
}

/** every chart version of the index with its URLs resolved against the index's upstream URL */
const chartUrls = function*(index: IndexFile, indexUrl: string) {
  for (const versions of Object.values(index.entries ?? {})) {
    if (!Array.isArray(versions)) continue
    for (const version of versions) {
      if (version === null || typeof version !== "object" || !Array.isArray(version.urls)) continue
      yield {
        version,
        urls: version.urls.map((url) => (typeof url === "string" ? resolveUrl(url, indexUrl) : undefined))
      }
    }
  }
}

export const classify = (method: string, path: string): Route => {
  if (method !== "GET" && method !== "HEAD") {
    return { kind: "invalid", status: 405, message: `${method} is not supported: helm proxy repositories are read-only` }
  }
  if (path === "" || path === "index.yaml") {
    return { kind: "cached", key: "index.yaml", upstreamPath: "index.yaml", freshness: "metadata", transform: "index" }
  }
  // chart archives and their provenance files: listed by the index, never changed once published;
  // a host other than the upstream's is only ever asked for what the index named
  const listed = path.endsWith(".tgz") || path.endsWith(".prov")
  const offHost = path.startsWith("_upstream/")
  if (listed || offHost) {
    return { kind: "cached", key: path, upstreamPath: offHost ? "" : path, freshness: "immutable", linked: true }
  }
  return { kind: "cached", key: path, upstreamPath: path, freshness: "content" }
}

/** index.yaml with every chart URL pointing at larder (as JSON: YAML's subset, which helm reads, and far faster to write) */
export const rewriteIndex = (body: Buffer, base: string, remoteUrl: string): Buffer => {
  const index = readIndex(body)
  const indexUrl = upstreamUrl(remoteUrl, "index.yaml")
  for (const { version, urls } of chartUrls(index, indexUrl)) {
    version.urls = urls.map((url, position) => {
      const path = url === undefined ? undefined : contentPath(url, remoteUrl)
      return path === undefined ? version.urls![position] : publicUrl(base, path)
    })
  }
  return Buffer.from(JSON.stringify(index))
}

/** a link per chart URL (digest-checked) and per provenance file next to it */
export const indexLinks = (body: Buffer, remoteUrl: string): Array<Link> => {
  const index = readIndex(body)
  const links: Array<Link> = []
  for (const { version, urls } of chartUrls(index, upstreamUrl(remoteUrl, "index.yaml"))) {
    const digest = typeof version.digest === "string" ? hexDigest("sha256", version.digest) : undefined
    for (const url of urls) {
      const key = url === undefined ? undefined : contentPath(url, remoteUrl)
      if (key === undefined) continue
      links.push({ key, url: url!, digest })
      links.push({ key: `${key}.prov`, url: `${url}.prov` })
    }
  }
  return links
}

export const helmRules = (repository: Repository): FormatRules => ({
  classify,
  errorStyle: "text",
  forwardQuery: false,
  rewrite: (_transform, body, context) => rewriteIndex(body, context.base, repository.proxy.remoteUrl),
  links: async (_transform, context) => indexLinks(await context.read(), repository.proxy.remoteUrl)
})
