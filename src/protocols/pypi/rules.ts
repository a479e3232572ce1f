// PyPI's simple repository API: project pages in PEP 503 HTML or PEP 691 JSON (chosen by Accept,
// cached apart), names normalised (PEP 503), file links rewritten to larder keeping their
// `#sha256=` fragments and data-* attributes, and each file verified by that sha256 (PEP 658
// `.metadata` companions too). PyPI serves files from another host; those are served under
// `_upstream/<host>/...` and fetched only at the URL a project page named.
import type { Repository } from "../../../appliance/config/Repository.ts"
import { contentPath, hexDigest, publicUrl, resolveUrl } from "../links.ts"
import { upstreamUrl } from "../path.ts"
import type { FormatRules, Link, Route } from "../route.ts"

export const jsonType = "application/vnd.pypi.simple.v1+json"
export const htmlType = "application/vnd.pypi.simple.v1+html"

/** PEP 503: lower-case, runs of -, _ and . become one - */
export const normalise = (name: string): string => name.replace(/[-_.]+/g, "-").toLowerCase()

// PEP 508 names: letters and digits, with - _ . inside
const projectName = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/

/** whether the client prefers PEP 691 JSON (by q-value; on a tie, the order it listed them) */
export const prefersJson = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  let json = -1
  let html = -1
  for (const part of accept.split(",")) {
    const [type, ...params] = part.split(";").map((piece) => piece.trim().toLowerCase())
    const qParam = params.find((param) => param.startsWith("q="))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2))
    if (!Number.isFinite(q) || q <= 0) continue
    if (type === jsonType) json = Math.max(json, q)
    else if (type === htmlType || type === "text/html") html = Math.max(html, q)
  }
  return json > html || (json >= 0 && json === html && accept.toLowerCase().indexOf(jsonType) < accept.toLowerCase().indexOf("html"))
}

export const classify = (method: string, path: string, accept?: string | undefined): Route => {
  if (method !== "GET" && method !== "HEAD") {
    return { kind: "invalid", status: 405, message: `${method} is not supported: the PyPI proxy is read-only (upload to the real index)` }
  }
  if (path === "simple" || path.startsWith("simple/")) {
    const match = /^simple(?:\/([^/]+))?\/?$/.exec(path)
    const project = match?.[1]
    if (match === null || (project !== undefined && !projectName.test(project))) {
      return { kind: "invalid", status: 404, message: `not a simple API path: ${path} (expected simple/ or simple/<project>/)` }
    }
    const page = project === undefined ? "simple/" : `simple/${normalise(project)}/`
    const json = prefersJson(accept)
    return {
      kind: "cached",
      // a path cannot contain "#" here (the project pattern refuses it), so the JSON key is its own
      key: json ? `${page}#json` : page,
      upstreamPath: page,
      freshness: "metadata",
      transform: "page",
      upstreamHeaders: { accept: json ? `${jsonType}, ${htmlType};q=0.1` : `${htmlType}, text/html;q=0.9` }
    }
  }
  if (path === "") return { kind: "invalid", status: 404, message: "the PyPI proxy's index is at simple/" }
  // distribution files and their .metadata, named by project pages
  return { kind: "cached", key: path, upstreamPath: path.startsWith("_upstream/") ? "" : path, freshness: "immutable", linked: true }
}

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }

export const decodeEntities = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10)
      return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return entities[name.toLowerCase()] ?? whole
  })

const encodeAttribute = (text: string): string => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

interface Anchor {
  /** offsets of the href value inside the page (without quotes) */
  readonly start: number
  readonly end: number
  readonly href: string
  readonly attributes: ReadonlyMap<string, string>
}

/** the anchors of a simple page with their decoded attributes */
export const anchors = (html: string): Array<Anchor> => {
  const found: Array<Anchor> = []
  for (const tag of html.matchAll(/<a\s([^>]*)>/gi)) {
    const attributes = new Map<string, string>()
    let href: { start: number; end: number } | undefined
    const body = tag[1]
    const bodyStart = tag.index! + tag[0].indexOf(body)
    for (const attribute of body.matchAll(/([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g)) {
      const name = attribute[1].toLowerCase()
      const raw = attribute[2] ?? attribute[3] ?? attribute[4] ?? ""
      attributes.set(name, decodeEntities(raw))
      if (name === "href" && raw !== "") {
        const valueAt = attribute.index! + attribute[0].lastIndexOf(raw)
        href = { start: bodyStart + valueAt, end: bodyStart + valueAt + raw.length }
      }
    }
    if (href !== undefined) found.push({ ...href, href: attributes.get("href")!, attributes })
  }
  return found
}

const splitFragment = (url: string): [string, string] => {
  const at = url.indexOf("#")
  return at === -1 ? [url, ""] : [url.slice(0, at), url.slice(at)]
}

const hashDigest = (value: string | undefined): string | undefined => {
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(value ?? "")
  return match === null ? undefined : hexDigest("sha256", match[1])
}

/** where larder serves a URL a page names (undefined: left as it is) */
const localPath = (href: string, pageUrl: string, remoteUrl: string): string | undefined => {
  const resolved = resolveUrl(href, pageUrl)
  return resolved === undefined ? undefined : contentPath(splitFragment(resolved)[0], remoteUrl)
}

const isJson = (body: Buffer) => {
  for (const byte of body) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0xef || byte === 0xbb || byte === 0xbf) continue
    return byte === 0x7b // "{"
  }
  return false
}

interface JsonFile {
  url?: unknown
  hashes?: { sha256?: unknown }
  "core-metadata"?: unknown
  "dist-info-metadata"?: unknown
  [field: string]: unknown
}

const jsonFiles = (page: { files?: unknown }): Array<JsonFile> =>
  Array.isArray(page.files) ? page.files.filter((file): file is JsonFile => file !== null && typeof file === "object") : []

const jsonMetadataDigest = (file: JsonFile): string | undefined | false => {
  const value = file["core-metadata"] ?? file["dist-info-metadata"]
  if (value === undefined || value === false) return false
  if (value !== null && typeof value === "object" && typeof (value as { sha256?: unknown }).sha256 === "string") {
    return hexDigest("sha256", (value as { sha256: string }).sha256)
  }
  return undefined
}

/** a simple page (HTML or JSON) with every link into the repository pointing at larder */
export const rewritePage = (body: Buffer, pageUrl: string, remoteUrl: string, base: string): Buffer => {
  if (isJson(body)) {
    const page = JSON.parse(body.toString()) as { files?: unknown; projects?: unknown }
    for (const file of jsonFiles(page)) {
      if (typeof file.url !== "string") continue
      const path = localPath(file.url, pageUrl, remoteUrl)
      if (path !== undefined) file.url = publicUrl(base, path)
    }
    return Buffer.from(JSON.stringify(page))
  }
  const html = body.toString()
  let out = ""
  let at = 0
  for (const anchor of anchors(html)) {
    const [, fragment] = splitFragment(anchor.href)
    const path = localPath(anchor.href, pageUrl, remoteUrl)
    if (path === undefined) continue
    out += html.slice(at, anchor.start) + encodeAttribute(publicUrl(base, path) + fragment)
    at = anchor.end
  }
  return Buffer.from(out + html.slice(at))
}

/** links (URL + sha256) for every file a project page lists, and for its PEP 658 metadata */
export const pageLinks = (body: Buffer, pageUrl: string, remoteUrl: string): Array<Link> => {
  const links: Array<Link> = []
  const add = (url: string, digest: string | undefined, metadata: string | undefined | false) => {
    const resolved = resolveUrl(url, pageUrl)
    if (resolved === undefined) return
    const [file] = splitFragment(resolved)
    const key = contentPath(file, remoteUrl)
    // the root page links project pages, which are routed by name, not by link
    if (key === undefined || key.startsWith("simple/")) return
    links.push({ key, url: file, digest })
    if (metadata !== false) links.push({ key: `${key}.metadata`, url: `${file}.metadata`, digest: metadata })
  }
  if (isJson(body)) {
    const page = JSON.parse(body.toString()) as { files?: unknown }
    for (const file of jsonFiles(page)) {
      if (typeof file.url !== "string") continue
      const sha = typeof file.hashes?.sha256 === "string" ? hexDigest("sha256", file.hashes.sha256) : undefined
      add(file.url, sha, jsonMetadataDigest(file))
    }
    return links
  }
  for (const anchor of anchors(body.toString())) {
    const [, fragment] = splitFragment(anchor.href)
    const metadata = anchor.attributes.get("data-core-metadata") ?? anchor.attributes.get("data-dist-info-metadata")
    add(anchor.href, hashDigest(fragment.slice(1)), metadata === undefined ? false : hashDigest(metadata))
  }
  return links
}

export const pypiRules = (repository: Repository): FormatRules => {
  const remoteUrl = repository.proxy.remoteUrl
  return {
    classify,
    errorStyle: "text",
    forwardQuery: false,
    rewrite: (_transform, body, context) => {
      const page = context.path.startsWith("simple") ? context.path : "simple/"
      return rewritePage(body, upstreamUrl(remoteUrl, page.endsWith("/") ? page : page + "/"), remoteUrl, context.base)
    },
    links: async (_transform, context) => pageLinks(await context.read(), upstreamUrl(remoteUrl, context.path), remoteUrl)
  }
}
