// One actor per repository: its configuration, its fetches in flight and the cache decisions for
// each request (hit, miss, join a fetch, negative, stale). It answers with a RepositoryReply that
// src/http renders in the format's own error shape.
import { Effect } from "effect"
import { minutesToMs, type Repository } from "../../appliance/config/Repository.ts"
import { upstreamUrl } from "../protocols/path.ts"
import { classify } from "../protocols/raw/classify.ts"
import { parseRange, type RangeRequest } from "../protocols/range.ts"
import type { CacheEntry } from "../storage/Index.ts"
import { serveEntry as serveEntryAsync, type EntryDeps } from "./serveEntry.ts"
import { startFetch, type Fetch, type FetchHead } from "./FetchActor.ts"
import type { UpstreamClient } from "./UpstreamClient.ts"

export interface RepositoryRequest {
  readonly method: string
  readonly path: string
  readonly query: string
  readonly range: string | undefined
  readonly ifNoneMatch: string | undefined
}

export type RepositoryReply =
  | {
    readonly kind: "content"
    readonly status: 200 | 206 | 304 | 416
    readonly headers: Record<string, string>
    readonly body: Uint8Array | FileSlice | FollowerSlice | undefined
  }
  | {
    readonly kind: "error"
    readonly status: number
    readonly message: string
    readonly retryAfter?: string | undefined
  }

/** bytes start..end (inclusive) of a blob file, streamed by the engine */
export interface FileSlice {
  readonly file: string
  readonly start: number
  readonly end: number
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
export const isFresh = (config: Repository, entry: CacheEntry, now: number): boolean =>
  now - entry.fetchedAt < minutesToMs(config.proxy.contentMaxAge) || config.proxy.remoteUrl === ""

export interface RepositoryActor {
  readonly config: Repository
  readonly handle: (request: RepositoryRequest) => Effect.Effect<RepositoryReply>
  /** waits for fetches in flight (called when the actor is released) */
  readonly drain: () => Promise<void>
}

export const makeRepositoryActor = (config: Repository, deps: RepositoryDeps): RepositoryActor => {
  const { index, blobs, client, metrics } = deps
  const name = config.name
  const inFlight = new Map<string, Fetch>()
  const count = (result: "hit" | "miss" | "coalesced" | "negative" | "stale") =>
    metrics.cacheResult(name, result).inc()

  const serveEntry = (entry: CacheEntry, request: RepositoryRequest) => serveEntryAsync(entry, request, deps)

  const serveFetch = (fetch: Fetch, head: Extract<FetchHead, { kind: "body" }>, request: RepositoryRequest): RepositoryReply => {
    const headers: Record<string, string> = { "content-type": head.contentType ?? "application/octet-stream" }
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

  const begin = (path: string, query: string, stale: CacheEntry | undefined): Fetch => {
    const conditional: Record<string, string> = {}
    if (stale?.upstreamEtag !== undefined) conditional["if-none-match"] = stale.upstreamEtag
    if (stale?.lastModified !== undefined) conditional["if-modified-since"] = stale.lastModified
    const url = upstreamUrl(config.proxy.remoteUrl, path, query)
    const fetch = startFetch({
      key: path,
      send: () =>
        Effect.runPromise(
          client.request({ url, headers: conditional }).pipe(
            Effect.tap((response) => Effect.sync(() => metrics.upstreamRequests.inc({ repository: name, status: String(response.status) }))),
            Effect.catch((error) =>
              Effect.sync(() => {
                metrics.upstreamRequests.inc({ repository: name, status: "error" })
                return { unreachable: `upstream ${url} is unreachable: ${error.message}` }
              })
            )
          )
        ),
      beginWrite: blobs.beginUnscoped,
      commit: (head, digest, size) =>
        index.commitEntry(name, path, {
          digest,
          size,
          contentType: head.contentType,
          upstreamEtag: head.upstreamEtag,
          lastModified: head.lastModified,
          fetchedAt: Date.now()
        }),
      onBytes: (bytes) => {
        metrics.upstreamBytes.inc({ repository: name }, bytes)
        metrics.blobWriteBytes.inc(bytes)
      }
    })
    inFlight.set(path, fetch)
    void fetch.done.then(async (outcome) => {
      inFlight.delete(path)
      if (!outcome.ok && outcome.reason === "Crashed") {
        metrics.actorCrashes.inc({ actor: "fetch" })
        await Effect.runPromise(Effect.logError(`fetch actor ${name}/${path} crashed: ${outcome.message}`))
      } else if (!outcome.ok && outcome.reason !== "Failed") {
        metrics.fetchFailures.inc({ repository: name, reason: outcome.reason })
        await Effect.runPromise(Effect.logWarning(`repository ${name}: fetch of ${path} failed (${outcome.reason}): ${outcome.message}`))
      }
    })
    return fetch
  }

  const handleAsync = async (request: RepositoryRequest): Promise<RepositoryReply> => {
    if (!config.online) return { kind: "error", status: 503, message: `repository "${name}" is offline` }
    const route = classify(request.method, request.path)
    if (route.kind === "invalid") return { kind: "error", status: route.status, message: route.message }
    const path = route.path
    const entry = index.getEntry(name, path)
    const now = Date.now()
    if (entry !== undefined && isFresh(config, entry, now)) {
      count("hit")
      return serveEntry(entry, request)
    }
    if (entry === undefined) {
      const negative = index.getNegative(name, path)
      if (negative !== undefined && negative.expiresAt > now) {
        count("negative")
        return { kind: "error", status: 404, message: `${path} was not found upstream of repository "${name}" (cached)` }
      }
    }
    if (config.proxy.remoteUrl === "") {
      return {
        kind: "error",
        status: 502,
        message: `repository "${name}" has no upstream configured; set proxy.remoteUrl with PUT /service/rest/v1/repositories/${config.format}/proxy/${name} or in the --repositories file`
      }
    }
    // A revalidation is counted when its answer is known: hit (304), miss (new body) or stale.
    let fetch = inFlight.get(path)
    const joined = fetch !== undefined
    if (fetch === undefined) {
      fetch = begin(path, request.query, entry)
      if (entry === undefined) count("miss")
    } else {
      count("coalesced")
    }
    const head = await fetch.head
    switch (head.kind) {
      case "body":
        if (entry !== undefined && !joined) count("miss")
        return serveFetch(fetch, head, request)
      case "not-modified": {
        if (entry === undefined) return { kind: "error", status: 502, message: "upstream answered 304 to an unconditional request" }
        if (!joined) count("hit")
        const refreshed = { ...entry, fetchedAt: Date.now() }
        await index.commitEntry(name, path, refreshed)
        return serveEntry(refreshed, request)
      }
      case "status": {
        if (head.status === 404 || head.status === 410) {
          if (config.negativeCache.enabled && entry === undefined) {
            await index.putNegative(name, path, { status: head.status, expiresAt: Date.now() + minutesToMs(config.negativeCache.timeToLive) })
          }
          return { kind: "error", status: 404, message: `${path} was not found upstream of repository "${name}"` }
        }
        if (entry !== undefined) {
          count("stale")
          return serveEntry(entry, request)
        }
        return {
          kind: "error",
          status: head.status,
          message: `upstream of repository "${name}" answered ${head.status}${head.body ? `: ${head.body.slice(0, 500)}` : ""}`,
          retryAfter: head.retryAfter
        }
      }
      case "unreachable":
        if (entry !== undefined) {
          count("stale")
          return serveEntry(entry, request)
        }
        return { kind: "error", status: 502, message: head.message }
    }
  }

  return {
    config,
    handle: (request) =>
      Effect.tryPromise(() => handleAsync(request)).pipe(
        Effect.catch((error) =>
          Effect.logError(`repository ${name}: ${request.method} ${request.path} failed: ${error.cause ?? error}`).pipe(
            Effect.as<RepositoryReply>({ kind: "error", status: 500, message: `internal error serving ${request.path}` })
          )
        )
      ),
    drain: async () => {
      await Promise.allSettled([...inFlight.values()].map((fetch) => fetch.done))
    }
  }
}
