// One actor per repository: its configuration, its fetches in flight and the cache decisions for
// each request (hit, miss, join a fetch, negative, stale). It answers with a RepositoryReply that
// src/http renders in the format's own error shape.
import { createHash } from "node:crypto"
import { promises as fs } from "node:fs"
import { Effect } from "effect"
import { minutesToMs, type Repository } from "../../appliance/config/Repository.ts"
import { rulesFor, type ErrorStyle, type FormatRules } from "../protocols/formats.ts"
import { pullScope } from "../protocols/oci/challenge.ts"
import { upstreamUrl } from "../protocols/path.ts"
import { parseRange, type RangeRequest } from "../protocols/range.ts"
import type { ErrorCode, Freshness, Link, Route } from "../protocols/route.ts"
import type { CacheEntry } from "../storage/Index.ts"
import { serveDerived, serveEntry as serveEntryAsync, serveEntrySync, type EntryDeps } from "./serveEntry.ts"
import { startFetch, type Fetch, type FetchHead } from "./FetchActor.ts"
import { makeRegistryAuth } from "./RegistryAuth.ts"
import type { UpstreamClient } from "./UpstreamClient.ts"

export interface RepositoryRequest {
  readonly method: string
  readonly path: string
  readonly query: string
  readonly range: string | undefined
  readonly ifNoneMatch: string | undefined
  /** the client's Accept header (registries negotiate manifest media types with it) */
  readonly accept?: string | undefined
  /** the repository's public base URL as the client reached it (metadata URLs are rewritten to it) */
  readonly base?: string | undefined
}

export type RepositoryReply =
  | {
    readonly kind: "content"
    readonly status: number
    readonly headers: Record<string, string>
    readonly body: Uint8Array | FileSlice | FollowerSlice | undefined
  }
  | {
    readonly kind: "error"
    readonly status: number
    readonly message: string
    readonly retryAfter?: string | undefined
    /** the format's error code, for formats whose errors carry one */
    readonly code?: ErrorCode | undefined
    readonly style?: ErrorStyle | undefined
  }

/** bytes start..end (inclusive) of a blob file, streamed by the engine */
export interface FileSlice {
  readonly file: string
  readonly start: number
  readonly end: number
  /** unpins the blob (see Index.pin); the engine calls it once the file is read or abandoned */
  readonly release?: (() => void) | undefined
}

/** bytes of a fetch in flight, streamed by the engine as they arrive (end inclusive, or to the end) */
export interface FollowerSlice {
  readonly follow: Fetch
  readonly start: number
  readonly end: number | undefined
  readonly blobPath: (digest: string) => string
}

export interface RepositoryDeps extends EntryDeps {
  readonly client: UpstreamClient["Service"]
}

/** Fresh content is served without asking the upstream; without an upstream everything is. */
export const isFresh = (config: Repository, entry: CacheEntry, freshness: Freshness, now: number): boolean =>
  freshness === "immutable" ||
  config.proxy.remoteUrl === "" ||
  now - entry.fetchedAt < minutesToMs(freshness === "metadata" ? config.proxy.metadataMaxAge : config.proxy.contentMaxAge)

type CachedRoute = Extract<Route, { kind: "cached" }>

/** A narrow-Accept route uses the default entry when that entry's media type is acceptable. */
const resolveShared = (route: CachedRoute, index: EntryDeps["index"], repository: string): CachedRoute => {
  if (route.sharedKey === undefined) return route
  const shared = index.getEntry(repository, route.sharedKey)
  return shared?.contentType !== undefined && route.acceptable?.includes(shared.contentType)
    ? { ...route, key: route.sharedKey }
    : route
}

/** headers a route adds to every reply (API version, the content's digest) */
const routeHeaders = (route: CachedRoute, digest: string | undefined): Record<string, string> => {
  const headers: Record<string, string> = { ...route.replyHeaders }
  if (route.digestHeader && digest !== undefined) headers["docker-content-digest"] = digest
  return headers
}

/** whether a route's stored bytes are rewritten per client */
const rewritten = (rules: FormatRules, route: CachedRoute): boolean =>
  route.transform !== undefined && rules.rewrite !== undefined && (rules.rewrites?.includes(route.transform) ?? true)

const rewriteKey = (route: CachedRoute, entry: CacheEntry, base: string) => `${route.transform}\0${entry.digest}\0${base}`

// rewritten bytes differ per base URL, so their ETag does too
const derivedEtag = (entry: CacheEntry, base: string) =>
  `"${entry.digest.slice(7, 39)}-${createHash("sha256").update(base).digest("hex").slice(0, 12)}"`

/**
 * For content listed by metadata: whether the cached entry is the content the current link
 * names (a link with a sha256 pins the bytes; other checksums were verified when fetched).
 */
const matchesLink = (entry: CacheEntry, link: Link | undefined): boolean =>
  link?.digest === undefined || !link.digest.startsWith("sha256:") || link.digest === entry.digest

/**
 * A fresh hit answered without I/O (the engine's fast path), or undefined when the request
 * needs the actor. Counts the hit.
 */
export const freshHit = (
  config: Repository,
  rules: FormatRules,
  deps: EntryDeps,
  request: RepositoryRequest
): RepositoryReply | undefined => {
  if (!config.online) return undefined
  const classified = rules.classify(request.method, request.path, request.accept)
  if (classified.kind !== "cached") return undefined
  const route = resolveShared(classified, deps.index, config.name)
  const entry = deps.index.getEntry(config.name, route.key)
  if (entry === undefined) return undefined
  const link = route.linked ? deps.index.getLink(config.name, route.key) : undefined
  if (!matchesLink(entry, link)) return undefined
  if (link?.digest !== entry.digest && !isFresh(config, entry, route.freshness, Date.now())) return undefined
  let reply: RepositoryReply | undefined
  if (rewritten(rules, route)) {
    const base = request.base ?? ""
    const bytes = deps.rewritten.get(rewriteKey(route, entry, base))
    if (bytes === undefined) return undefined
    reply = serveDerived(entry, bytes, derivedEtag(entry, base), request, deps, routeHeaders(route, entry.digest))
  } else {
    reply = serveEntrySync(entry, request, deps, routeHeaders(route, entry.digest))
  }
  if (reply !== undefined) deps.metrics.cacheResult(config.name, "hit").inc()
  return reply
}

const upstreamErrorCode = (status: number, route: CachedRoute): ErrorCode | undefined =>
  status === 404 || status === 410
    ? route.notFoundCode
    : status === 429
    ? "TOOMANYREQUESTS"
    : status === 401 || status === 403
    ? "UNAUTHORIZED"
    : undefined

export interface RepositoryActor {
  readonly config: Repository
  readonly handle: (request: RepositoryRequest) => Effect.Effect<RepositoryReply>
  /** waits for fetches in flight (called when the actor is released) */
  readonly drain: () => Promise<void>
}

export const makeRepositoryActor = (config: Repository, deps: RepositoryDeps): RepositoryActor => {
  const { index, blobs, client, metrics } = deps
  const name = config.name
  const rules = rulesFor(config)
  const inFlight = new Map<string, Fetch>()
  const count = (result: "hit" | "miss" | "coalesced" | "negative" | "stale") =>
    metrics.cacheResult(name, result).inc()
  const error = (status: number, message: string, extra: { code?: ErrorCode | undefined; retryAfter?: string | undefined } = {}): RepositoryReply => ({
    kind: "error",
    status,
    message,
    style: rules.errorStyle,
    ...extra
  })

  /** serves an entry; metadata with a rewrite is rewritten for this client's base URL */
  const serveEntry = async (route: CachedRoute, entry: CacheEntry, request: RepositoryRequest): Promise<RepositoryReply> => {
    if (!rewritten(rules, route)) {
      return serveEntryAsync(entry, request, deps, routeHeaders(route, entry.digest))
    }
    const base = request.base ?? ""
    const memoKey = rewriteKey(route, entry, base)
    let bytes = deps.rewritten.get(memoKey)
    if (bytes === undefined) {
      const stored = await fs.readFile(blobs.blobPath(entry.digest))
      try {
        bytes = rules.rewrite!(route.transform!, stored, { base, remoteUrl: config.proxy.remoteUrl, path: request.path })
      } catch (failure) {
        // the upstream's metadata is not what the format expects: pass it on as it came
        await Effect.runPromise(Effect.logWarning(`repository ${name}: cannot rewrite ${request.path}: ${failure}`))
        bytes = stored
      }
      deps.rewritten.set(memoKey, bytes)
    }
    return serveDerived(entry, bytes, derivedEtag(entry, base), request, deps, routeHeaders(route, entry.digest))
  }

  /** reads the links a metadata object publishes and records them (failures are logged, not fatal) */
  const recordLinks = async (route: CachedRoute, digest: string) => {
    if (route.transform === undefined || rules.links === undefined) return
    const file = blobs.blobPath(digest)
    try {
      const links = await rules.links(route.transform, {
        remoteUrl: config.proxy.remoteUrl,
        path: route.upstreamPath,
        file,
        read: () => fs.readFile(file),
        cached: async (key) => {
          const entry = index.getEntry(name, key)
          return entry === undefined ? undefined : fs.readFile(blobs.blobPath(entry.digest)).catch(() => undefined)
        }
      })
      if (links.length > 0) await index.putLinks(name, links)
    } catch (failure) {
      await Effect.runPromise(Effect.logWarning(`repository ${name}: cannot read the links in ${route.upstreamPath}: ${failure}`))
    }
  }

  const serveFetch = (
    route: CachedRoute,
    fetch: Fetch,
    head: Extract<FetchHead, { kind: "body" }>,
    request: RepositoryRequest
  ): RepositoryReply => {
    const headers: Record<string, string> = {
      ...routeHeaders(route, route.expectedDigest ?? head.upstreamDigest),
      "content-type": head.contentType ?? "application/octet-stream"
    }
    if (head.lastModified !== undefined) headers["last-modified"] = head.lastModified
    // Without a declared size a range cannot be answered before the end: send it all (RFC 9110 allows it).
    const range: RangeRequest = head.size === undefined ? { kind: "full" } : parseRange(request.range, head.size)
    if (range.kind === "unsatisfiable") {
      return { kind: "content", status: 416, headers: { ...headers, "content-range": `bytes */${head.size}` }, body: undefined }
    }
    if (head.size !== undefined) {
      headers["accept-ranges"] = "bytes"
      headers["content-length"] = String(range.kind === "range" ? range.end - range.start + 1 : head.size)
      if (range.kind === "range") headers["content-range"] = `bytes ${range.start}-${range.end}/${head.size}`
    }
    const status = range.kind === "range" ? 206 : 200
    if (request.method === "HEAD") return { kind: "content", status, headers, body: undefined }
    const body: FollowerSlice = range.kind === "range"
      ? { follow: fetch, start: range.start, end: range.end, blobPath: blobs.blobPath }
      : { follow: fetch, start: 0, end: undefined, blobPath: blobs.blobPath }
    return { kind: "content", status, headers, body }
  }

  // registries answer 401 with a Bearer challenge; other formats are asked directly
  const auth = config.format === "docker" ? makeRegistryAuth(client, config.httpClient?.authentication) : undefined
  const send = (url: string, method: "GET" | "HEAD", headers: Record<string, string>, scope: string | undefined) =>
    Effect.runPromise(
      (auth === undefined ? client.request({ url, method, headers }) : auth.request({ url, method, headers }, scope)).pipe(
        Effect.tap((response) => Effect.sync(() => metrics.upstreamRequests.inc({ repository: name, status: String(response.status) }))),
        Effect.catch((failure) =>
          Effect.sync(() => {
            metrics.upstreamRequests.inc({ repository: name, status: "error" })
            return { unreachable: `upstream ${url} is unreachable: ${failure.message}` }
          })
        )
      )
    )

  const begin = (route: CachedRoute, query: string, stale: CacheEntry | undefined, link: Link | undefined): Fetch => {
    const headers: Record<string, string> = { ...route.upstreamHeaders }
    if (stale?.upstreamEtag !== undefined) headers["if-none-match"] = stale.upstreamEtag
    if (stale?.lastModified !== undefined) headers["if-modified-since"] = stale.lastModified
    const url = link?.url ?? upstreamUrl(config.proxy.remoteUrl, route.upstreamPath, rules.forwardQuery ? query : "")
    const key = route.key
    const scope = pullScope(route.upstreamPath)
    const fetch = startFetch({
      key,
      send: async () => {
        const byHead = route.revalidateByHeadHeader
        if (stale !== undefined && byHead !== undefined) {
          // unchanged digest: a HEAD is all it takes (and it does not count against pull quotas)
          const probe = await send(url, "HEAD", { ...route.upstreamHeaders }, scope)
          if ("unreachable" in probe) return probe
          probe.body.resume()
          if (probe.status !== 200 || probe.headers[byHead] !== stale.digest) return send(url, "GET", headers, scope)
          return { ...probe, status: 304 }
        }
        return send(url, "GET", headers, scope)
      },
      beginWrite: blobs.beginUnscoped,
      expectedDigest: (head) => link?.digest ?? route.expectedDigest ?? (route.digestHeader ? head.upstreamDigest : undefined),
      expectedSize: link?.size,
      commit: async (head, digest, size) => {
        await index.commitEntry(name, key, {
          digest,
          size,
          contentType: head.contentType,
          upstreamEtag: head.upstreamEtag,
          lastModified: head.lastModified,
          fetchedAt: Date.now()
        })
        await recordLinks(route, digest)
      },
      onBytes: (bytes) => {
        metrics.upstreamBytes.inc({ repository: name }, bytes)
        metrics.blobWriteBytes.inc(bytes)
      }
    })
    inFlight.set(key, fetch)
    void fetch.done.then(async (outcome) => {
      inFlight.delete(key)
      if (!outcome.ok && outcome.reason === "Crashed") {
        metrics.actorCrashes.inc({ actor: "fetch" })
        await Effect.runPromise(Effect.logError(`fetch actor ${name}/${key} crashed: ${outcome.message}`))
      } else if (!outcome.ok && outcome.reason !== "Failed") {
        metrics.fetchFailures.inc({ repository: name, reason: outcome.reason })
        await Effect.runPromise(Effect.logWarning(`repository ${name}: fetch of ${key} failed (${outcome.reason}): ${outcome.message}`))
      }
    })
    return fetch
  }

  const handleAsync = async (request: RepositoryRequest): Promise<RepositoryReply> => {
    if (!config.online) return error(503, `repository "${name}" is offline`)
    const classified = rules.classify(request.method, request.path, request.accept)
    if (classified.kind === "invalid") return error(classified.status, classified.message, { code: classified.code })
    if (classified.kind === "answer") {
      return { kind: "content", status: classified.status, headers: { ...classified.headers }, body: request.method === "HEAD" ? undefined : Buffer.from(classified.body) }
    }
    const route = resolveShared(classified, index, name)
    const key = route.key
    const link = route.linked ? index.getLink(name, key) : undefined
    if (route.linked && link === undefined && route.upstreamPath === "") {
      return error(404, `${request.path} is not listed in any metadata repository "${name}" has fetched; request the package's index first`)
    }
    const cached = index.getEntry(name, key)
    // content the current metadata no longer lists under this key is fetched afresh
    const entry = cached !== undefined && matchesLink(cached, link) ? cached : undefined
    const now = Date.now()
    if (entry !== undefined && (link?.digest === entry.digest || isFresh(config, entry, route.freshness, now))) {
      count("hit")
      return serveEntry(route, entry, request)
    }
    if (entry === undefined) {
      const negative = index.getNegative(name, key)
      if (negative !== undefined && negative.expiresAt > now) {
        count("negative")
        return error(404, `${request.path} was not found upstream of repository "${name}" (cached)`, { code: route.notFoundCode })
      }
    }
    if (config.proxy.remoteUrl === "") {
      return error(
        502,
        `repository "${name}" has no upstream configured; set proxy.remoteUrl with PUT /service/rest/v1/repositories/${config.format}/proxy/${name} or in the --repositories file`
      )
    }
    // A revalidation is counted when its answer is known: hit (304), miss (new body) or stale.
    let fetch = inFlight.get(key)
    const joined = fetch !== undefined
    if (fetch === undefined) {
      fetch = begin(route, request.query, entry, link)
      if (entry === undefined) count("miss")
    } else {
      count("coalesced")
    }
    const head = await fetch.head
    switch (head.kind) {
      case "body": {
        if (entry !== undefined && !joined) count("miss")
        if (route.transform === undefined) return serveFetch(route, fetch, head, request)
        // metadata is rewritten and read for links whole: the reply waits for the verified end
        const outcome = await fetch.done
        const fetched = outcome.ok ? index.getEntry(name, key) : undefined
        if (fetched === undefined) return error(502, `fetching ${request.path} from the upstream of repository "${name}" failed${outcome.ok ? "" : `: ${outcome.message}`}`)
        return serveEntry(route, fetched, request)
      }
      case "not-modified": {
        if (entry === undefined) return error(502, "upstream answered 304 to an unconditional request")
        if (!joined) count("hit")
        const refreshed = { ...entry, fetchedAt: Date.now() }
        await index.commitEntry(name, key, refreshed)
        return serveEntry(route, refreshed, request)
      }
      case "status": {
        if (head.status === 404 || head.status === 410) {
          if (config.negativeCache.enabled && entry === undefined) {
            await index.putNegative(name, key, { status: head.status, expiresAt: Date.now() + minutesToMs(config.negativeCache.timeToLive) })
          }
          return error(404, `${request.path} was not found upstream of repository "${name}"`, { code: route.notFoundCode })
        }
        if (entry !== undefined) {
          count("stale")
          return serveEntry(route, entry, request)
        }
        return error(head.status, `upstream of repository "${name}" answered ${head.status}${head.body ? `: ${head.body.slice(0, 500)}` : ""}`, {
          code: upstreamErrorCode(head.status, route),
          retryAfter: head.retryAfter
        })
      }
      case "unreachable":
        if (entry !== undefined) {
          count("stale")
          return serveEntry(route, entry, request)
        }
        return error(502, head.message)
    }
  }

  return {
    config,
    handle: (request) =>
      Effect.tryPromise(() => handleAsync(request)).pipe(
        Effect.catch((failure) =>
          Effect.logError(`repository ${name}: ${request.method} ${request.path} failed: ${failure.cause ?? failure}`).pipe(
            Effect.as<RepositoryReply>(error(500, `internal error serving ${request.path}`))
          )
        )
      ),
    drain: async () => {
      await Promise.allSettled([...inFlight.values()].map((fetch) => fetch.done))
    }
  }
}
