// The Go module proxy protocol (GOPROXY, `go help goproxy`): per module, the version list and
// @latest are metadata; a canonical version's .info/.mod/.zip never change once published. The
// checksum database is passed through (`sumdb/<name>/...`) so GOSUMDB works via the proxy. The
// go command checks go.sum and the sumdb itself, so the proxy publishes no checksums to verify.
import type { Repository } from "../../../appliance/config/Repository.ts"
import type { FormatRules, Route } from "../route.ts"

const invalid = (message: string, status = 400): Route => ({ kind: "invalid", status, message })

/**
 * Module paths and versions travel case-encoded: every upper-case letter is written as "!" and
 * its lower-case form, so the path works on case-insensitive file systems. Returns the decoded
 * text, or undefined when the encoding is broken (an upper-case letter, or "!" before anything
 * but a lower-case letter).
 */
export const decodeCase = (encoded: string): string | undefined => {
  if (/[A-Z]/.test(encoded)) return undefined
  let decoded = ""
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded[i]
    if (c !== "!") {
      decoded += c
      continue
    }
    const next = encoded[i + 1]
    if (next === undefined || !/[a-z]/.test(next)) return undefined
    decoded += next.toUpperCase()
    i++
  }
  return decoded
}

// module path elements: letters, digits and -._~ (golang.org/x/mod/module's CheckPath, escaped form)
const modulePattern = /^[a-z0-9!._~-]+(?:\/[a-z0-9!._~-]+)*$/

/** semver as the go command writes it: vMAJOR.MINOR.PATCH, optional pre-release and +incompatible */
export const isCanonicalVersion = (version: string): boolean =>
  /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+incompatible)?$/.test(version)

const classifySumdb = (path: string): Route => {
  // sumdb/<database host>/<supported | latest | lookup/<module>@<version> | tile/...>
  const match = /^sumdb\/([a-z0-9.-]+(?::\d+)?)\/(.+)$/.exec(path)
  if (match === null) return invalid(`not a checksum database path: ${path}`, 404)
  const rest = match[2]
  if (rest === "supported" || rest === "latest" || rest.startsWith("lookup/")) {
    // the signed tree head in latest and in every lookup answer moves as the log grows
    return { kind: "cached", key: path, upstreamPath: path, freshness: "metadata" }
  }
  const tile = /^tile\/\d+\/(?:\d+|data)\/(?:x\d{3}\/)*\d{3}(\.p\/\d+)?$/.exec(rest)
  if (tile !== null) {
    // a full tile is fixed forever; a partial one (.p/<width>) is replaced as the log grows
    return { kind: "cached", key: path, upstreamPath: path, freshness: tile[1] === undefined ? "immutable" : "metadata" }
  }
  return invalid(`not a checksum database path: ${path}`, 404)
}

export const classify = (method: string, path: string): Route => {
  if (method !== "GET" && method !== "HEAD") return invalid(`${method} is not supported: the Go module proxy is read-only`, 405)
  if (path.startsWith("sumdb/")) return classifySumdb(path)
  const latest = /^(.+)\/@latest$/.exec(path)
  const versioned = /^(.+)\/@v\/(list|(.+)\.(info|mod|zip))$/.exec(path)
  const module = latest?.[1] ?? versioned?.[1]
  if (module === undefined) {
    return invalid(`not a Go module proxy path: ${path} (expected <module>/@v/list, <module>/@v/<version>.info|.mod|.zip or <module>/@latest)`, 404)
  }
  if (!modulePattern.test(module) || decodeCase(module) === undefined) {
    return invalid(`malformed module path "${module}": upper-case letters are written as "!" and the lower-case letter`)
  }
  if (latest !== null || versioned![2] === "list") return { kind: "cached", key: path, upstreamPath: path, freshness: "metadata" }
  const version = decodeCase(versioned![3])
  if (version === undefined) return invalid(`malformed version "${versioned![3]}": upper-case letters are written as "!" and the lower-case letter`)
  // .info of a branch or other query resolves to whatever it points at now
  return { kind: "cached", key: path, upstreamPath: path, freshness: isCanonicalVersion(version) ? "immutable" : "metadata" }
}

export const goRules = (_repository: Repository): FormatRules => ({ classify, errorStyle: "text", forwardQuery: false })
