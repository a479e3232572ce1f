// Request paths as repositories see them: split from the URL, percent-decoded once, and refused
// when they could step outside the repository (on the upstream or anywhere else).

export type RepositoryPath =
  | { readonly ok: true; readonly repository: string; readonly path: string; readonly query: string }
  | { readonly ok: false; readonly status: 400 | 404; readonly message: string }

const traversal = "path traversal is not allowed"

/** Validates a repository-relative path (no leading slash), already decoded. */
export const checkDecodedPath = (path: string): string | undefined => {
  if (/[\u0000-\u001f\u007f\\]/.test(path)) return "control characters and backslashes are not allowed in paths"
  const segments = path.split("/")
  for (const [position, segment] of segments.entries()) {
    if (segment === ".." || segment === ".") return traversal
    // "a//b" or a leading "/": only a trailing slash (a directory) may leave a segment empty
    if (segment === "" && position < segments.length - 1) return "empty path segments (//) are not allowed"
  }
  return undefined
}

/**
 * Parses "/repository/<name>/<path>?query" from a raw request URL. Encoded slashes, backslashes and
 * NUL are refused unless `allowEncodedSlash` (npm's scoped names use %2f).
 */
export interface ParseOptions {
  /** whether %2F may appear in the path below this repository (npm's scoped names) */
  readonly allowEncodedSlash?: boolean | ((repository: string) => boolean)
}

export const parseRepositoryUrl = (rawUrl: string, options: ParseOptions = {}): RepositoryPath => {
  const queryAt = rawUrl.indexOf("?")
  const rawPath = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt)
  const query = queryAt === -1 ? "" : rawUrl.slice(queryAt + 1)
  const match = /^\/repository\/([^/]+)(?:\/(.*))?$/.exec(rawPath)
  if (match === null) return { ok: false, status: 404, message: "expected /repository/<name>/<path>" }
  const [, rawName, written = ""] = match
  // A literal "." segment means "this directory" and is removed, as RFC 3986's remove_dot_segments
  // does (apt's flat repositories ask for <base>/./InRelease); ".." in any spelling and an encoded
  // "%2e" segment stay refused below.
  const segments = written.split("/")
  const rawRest = segments.filter((segment) => segment !== ".").join("/") + (segments.length > 1 && segments.at(-1) === "." ? "/" : "")
  const allow = options.allowEncodedSlash
  const encodedSlashAllowed = typeof allow === "function" ? allow(rawName) : allow === true
  if (/%(2f|5c|00)/i.test(rawName) || (/%(2f|5c|00)/i.test(rawRest) && !encodedSlashAllowed)) {
    return { ok: false, status: 400, message: "encoded slashes, backslashes and NUL are not allowed in paths" }
  }
  let repository: string
  let path: string
  try {
    repository = decodeURIComponent(rawName)
    path = decodeURIComponent(rawRest)
  } catch {
    return { ok: false, status: 400, message: "malformed percent-encoding in path" }
  }
  const problem = checkDecodedPath(path) ?? checkDecodedPath(repository)
  if (problem !== undefined) return { ok: false, status: 400, message: problem }
  return { ok: true, repository, path, query }
}

// RFC 3986 pchar: sub-delims, ":" and "@" stay as they are (registries expect sha256:<hex> verbatim)
export const encodeSegment = (segment: string) =>
  encodeURIComponent(segment).replace(/%(21|24|26|27|28|29|2A|2B|2C|3A|3B|3D|40)/gi, (escape) => decodeURIComponent(escape))

/** Joins an upstream base URL and a repository-relative path without letting the path escape it. */
export const upstreamUrl = (remoteUrl: string, path: string, query = ""): string => {
  const base = remoteUrl.endsWith("/") ? remoteUrl : remoteUrl + "/"
  // URL parsers resolve "." and ".." (even as %2E%2E), so such a segment is refused, not encoded
  if (checkDecodedPath(path) === traversal) throw new Error(`path traversal in upstream path: ${path}`)
  const encoded = path.split("/").map(encodeSegment).join("/")
  return base + encoded + (query === "" ? "" : "?" + query)
}

/**
 * Also accepts Nexus's path-based registry form, /v2/<repository>/<image>/..., as the repository's
 * own /repository/<repository>/v2/<image>/... (`pathBased` says which form it was).
 */
export const parseArtifactUrl = (
  rawUrl: string,
  options: ParseOptions = {}
): RepositoryPath & { readonly pathBased?: boolean } => {
  // docker://host/repository/<name>/<image> (registry clients put the whole path in the name)
  // arrives as /v2/repository/<name>/<image>/...: the same as /v2/<name>/<image>/...
  const pathBased = /^\/v2\/(?:repository\/)?([^/?]+)\/([^?]+.*)$/.exec(rawUrl)
  if (pathBased === null) return parseRepositoryUrl(rawUrl, options)
  const parsed = parseRepositoryUrl(`/repository/${pathBased[1]}/v2/${pathBased[2]}`, options)
  return parsed.ok ? { ...parsed, pathBased: true } : parsed
}
