// Shared by the package formats: where larder serves content that metadata lists, and the
// checksum notations formats publish, turned into "<algorithm>:<hex>" digests.
import { checkDecodedPath, encodeSegment } from "./path.ts"

const withSlash = (url: string) => (url.endsWith("/") ? url : url + "/")

/**
 * The path below the repository that content at `url` (absolute upstream URL) is served at: its
 * path relative to the upstream's base when it lives below it, else `_upstream/<host>/<path>`
 * (PyPI's files, GitHub release assets). Undefined when no safe path can be made.
 */
export const contentPath = (url: string, remoteUrl: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return undefined
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined
  const base = withSlash(remoteUrl)
  const plain = parsed.origin + parsed.pathname
  let path: string
  try {
    path = plain.startsWith(base)
      ? decodeURIComponent(plain.slice(base.length))
      : `_upstream/${parsed.host}${decodeURIComponent(parsed.pathname)}`
  } catch {
    return undefined
  }
  return path === "" || checkDecodedPath(path) !== undefined ? undefined : path
}

/** Resolves a possibly relative URL found in metadata fetched from `metadataUrl`. */
export const resolveUrl = (reference: string, metadataUrl: string): string | undefined => {
  try {
    return new URL(reference, metadataUrl).href
  } catch {
    return undefined
  }
}

/** An npm `integrity` (SRI: "sha512-<base64>", possibly several) as a digest, strongest first. */
export const digestFromIntegrity = (integrity: string): string | undefined => {
  const rank = { sha512: 3, sha384: 2, sha256: 1 } as const
  let best: { rank: number; digest: string } | undefined
  for (const token of integrity.trim().split(/\s+/)) {
    const match = /^(sha512|sha384|sha256)-([A-Za-z0-9+/]+={0,2})(?:\?.*)?$/.exec(token)
    if (match === null) continue
    const algorithm = match[1] as keyof typeof rank
    const hex = Buffer.from(match[2], "base64").toString("hex")
    if (best === undefined || rank[algorithm] > best.rank) best = { rank: rank[algorithm], digest: `${algorithm}:${hex}` }
  }
  return best?.digest
}

const hexLength = { sha1: 40, sha256: 64, sha384: 96, sha512: 128 } as const

/** "<algorithm>:<hex>" when `hex` is a well-formed digest of that algorithm, lower-cased. */
export const hexDigest = (algorithm: keyof typeof hexLength, hex: string): string | undefined => {
  const lower = hex.trim().toLowerCase()
  return lower.length === hexLength[algorithm] && /^[0-9a-f]+$/.test(lower) ? `${algorithm}:${lower}` : undefined
}

/** The repository's public base URL joined with a path (each segment encoded). */
export const publicUrl = (base: string, path: string): string => `${base}/${path.split("/").map(encodeSegment).join("/")}`
