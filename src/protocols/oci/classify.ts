// The registry API (distribution spec) as a pull-through proxy sees it: /v2/ answers itself,
// manifests and blobs by digest are immutable and verified, manifests by tag and tag lists are
// metadata, everything else in a container repository is "Not a docker request".
import type { Route } from "../route.ts"

export const manifestMediaTypes = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json"
] as const

const apiVersion = { "docker-distribution-api-version": "registry/2.0" }

// distribution's reference grammar: path components of lowercase alphanumerics joined by separators
const component = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
const namePattern = new RegExp(`^${component}(?:/${component})*$`)
const tagPattern = /^[\w][\w.-]{0,127}$/
const digestPattern = /^sha256:[a-f0-9]{64}$/

export interface OciOptions {
  /** the upstream is Docker Hub, where a one-component name means library/<name> */
  readonly dockerHub: boolean
}

const notDocker = (status = 400): Route => ({ kind: "invalid", status, message: "Not a docker request", code: "UNSUPPORTED" })

/**
 * The manifest media types a client's Accept admits, when that is narrower than all four (old
 * clients that cannot read an index or an OCI manifest); undefined means "any of them".
 */
export const acceptedManifestTypes = (accept: string | undefined): ReadonlyArray<string> | undefined => {
  if (accept === undefined) return undefined
  const listed = accept.split(",").map((part) => part.split(";")[0].trim().toLowerCase())
  if (listed.some((type) => type === "*/*" || type === "application/*")) return undefined
  const admitted = manifestMediaTypes.filter((type) => listed.includes(type))
  return admitted.length === 0 || admitted.length === manifestMediaTypes.length ? undefined : admitted
}

export const classify = (method: string, path: string, options: OciOptions, accept?: string | undefined): Route => {
  if (path === "v2" || path === "v2/") {
    return { kind: "answer", status: 200, headers: { ...apiVersion, "content-type": "application/json" }, body: "{}" }
  }
  if (!path.startsWith("v2/")) return notDocker()
  if (method !== "GET" && method !== "HEAD") {
    return { kind: "invalid", status: 405, message: `${method} is not supported: proxy repositories are read-only`, code: "UNSUPPORTED" }
  }
  const object = /^v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(path)
  const tags = /^v2\/(.+)\/tags\/list$/.exec(path)
  const rawName = object?.[1] ?? tags?.[1]
  if (rawName === undefined) return notDocker()
  if (!namePattern.test(rawName)) {
    return { kind: "invalid", status: 400, message: `invalid repository name "${rawName}"`, code: "NAME_INVALID" }
  }
  const name = options.dockerHub && !rawName.includes("/") ? `library/${rawName}` : rawName
  const common = { replyHeaders: apiVersion }
  if (tags !== undefined && tags !== null) {
    return { kind: "cached", key: `${name}/tags/list`, upstreamPath: `v2/${name}/tags/list`, freshness: "metadata", notFoundCode: "NAME_UNKNOWN", ...common }
  }
  const [, , kind, reference] = object!
  const byDigest = digestPattern.test(reference)
  if (kind === "blobs") {
    if (!byDigest) return { kind: "invalid", status: 400, message: `invalid blob digest "${reference}"`, code: "DIGEST_INVALID" }
    return {
      kind: "cached",
      // a layer is the same object whichever image names it
      key: `blobs/${reference}`,
      upstreamPath: `v2/${name}/blobs/${reference}`,
      freshness: "immutable",
      expectedDigest: reference,
      notFoundCode: "BLOB_UNKNOWN",
      digestHeader: true,
      ...common
    }
  }
  if (!byDigest && !tagPattern.test(reference)) {
    return { kind: "invalid", status: 400, message: `invalid manifest reference "${reference}"`, code: "MANIFEST_UNKNOWN" }
  }
  // A tag resolves to different manifests for different Accept headers (e.g. an index, or one
  // platform's manifest for a client that cannot read indexes): each narrower set is its own entry.
  const admitted = byDigest ? undefined : acceptedManifestTypes(accept)
  const upstreamAccept = { accept: (admitted ?? manifestMediaTypes).join(", ") }
  const variant = admitted === undefined ? "" : `#accept=${admitted.join(",")}`
  return byDigest
    ? {
      kind: "cached",
      key: `${name}/manifests/${reference}`,
      upstreamPath: `v2/${name}/manifests/${reference}`,
      freshness: "immutable",
      expectedDigest: reference,
      upstreamHeaders: upstreamAccept,
      notFoundCode: "MANIFEST_UNKNOWN",
      digestHeader: true,
      ...common
    }
    : {
      kind: "cached",
      key: `${name}/manifests/${reference}${variant}`,
      ...(admitted === undefined ? {} : { sharedKey: `${name}/manifests/${reference}`, acceptable: admitted }),
      upstreamPath: `v2/${name}/manifests/${reference}`,
      freshness: "metadata",
      upstreamHeaders: upstreamAccept,
      // Docker Hub does not count HEAD against the pull quota: revalidate tags with it
      revalidateByHeadHeader: "docker-content-digest",
      notFoundCode: "MANIFEST_UNKNOWN",
      digestHeader: true,
      ...common
    }
}

/** Docker Hub's registry host, whose one-component names live under library/ */
export const isDockerHub = (remoteUrl: string): boolean => {
  try {
    const host = new URL(remoteUrl).hostname
    return host === "registry-1.docker.io" || host === "docker.io" || host === "index.docker.io"
  } catch {
    return false
  }
}
