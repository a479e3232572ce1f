// Answers a request from a cached entry: conditional requests, ranges, HEAD, and the body from
// memory (small blobs) or a file stream. The synchronous half serves the engine's fast path.
import { promises as fs } from "node:fs"
import type { Metrics } from "../admin/Metrics.ts"
import { parseRange } from "../protocols/range.ts"
import type { BlobStore } from "../storage/BlobStore.ts"
import type { CacheEntry, Index } from "../storage/Index.ts"
import type { SmallBlobCache } from "../storage/SmallBlobCache.ts"
import type { RepositoryReply, RepositoryRequest } from "./RepositoryActor.ts"

// Small hits are read whole and kept in memory: one write, no stream set-up, no file I/O.
export const smallBlob = 64 * 1024

export interface EntryDeps {
  readonly index: Index["Service"]
  readonly blobs: BlobStore["Service"]
  readonly metrics: Metrics["Service"]
  readonly smallBlobs: SmallBlobCache
  /** metadata rewritten per client base URL, keyed by transform, digest and base */
  readonly rewritten: SmallBlobCache
}

const etagOf = (digest: string) => `"${digest.slice(7)}"`

const matchesEtag = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined &&
  (ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag))

type Planned =
  | { readonly done: RepositoryReply }
  | {
    readonly done?: undefined
    readonly status: 200 | 206
    readonly headers: Record<string, string>
    readonly start: number
    readonly end: number
    readonly partial: boolean
  }

const plan = (
  entry: CacheEntry,
  request: RepositoryRequest,
  deps: EntryDeps,
  extraHeaders: Record<string, string>,
  etag = etagOf(entry.digest)
): Planned => {
  const headers: Record<string, string> = {
    ...extraHeaders,
    "content-type": entry.contentType ?? "application/octet-stream",
    etag,
    "accept-ranges": "bytes"
  }
  if (entry.lastModified !== undefined) headers["last-modified"] = entry.lastModified
  deps.index.touch(entry.digest)
  if (matchesEtag(request.ifNoneMatch, etag)) return { done: { kind: "content", status: 304, headers, body: undefined } }
  const range = parseRange(request.range, entry.size)
  if (range.kind === "unsatisfiable") {
    headers["content-range"] = `bytes */${entry.size}`
    return { done: { kind: "content", status: 416, headers, body: undefined } }
  }
  const partial = range.kind === "range"
  const start = partial ? range.start : 0
  const end = partial ? range.end : entry.size - 1
  const length = entry.size === 0 ? 0 : end - start + 1
  headers["content-length"] = String(length)
  if (partial) headers["content-range"] = `bytes ${start}-${end}/${entry.size}`
  const status = partial ? 206 : 200
  if (request.method === "HEAD") return { done: { kind: "content", status, headers, body: undefined } }
  if (length === 0) return { done: { kind: "content", status, headers, body: new Uint8Array(0) } }
  return { status, headers, start, end, partial }
}

/**
 * The reply when it needs no I/O to decide: conditional, HEAD, range errors, a small blob in
 * memory, or a file slice for the engine to stream. Undefined when a small blob must be read first.
 */
export const serveEntrySync = (
  entry: CacheEntry,
  request: RepositoryRequest,
  deps: EntryDeps,
  extraHeaders: Record<string, string> = {}
): RepositoryReply | undefined => {
  const planned = plan(entry, request, deps, extraHeaders)
  if (planned.done !== undefined) return planned.done
  const { status, headers, start, end, partial } = planned
  if (!partial && entry.size <= smallBlob) {
    const body = deps.smallBlobs.get(entry.digest)
    if (body === undefined) return undefined
    deps.metrics.blobReadBytes.inc(body.length)
    return { kind: "content", status, headers, body }
  }
  deps.metrics.blobReadBytes.inc(end - start + 1)
  // pinned until the engine has read it: the quota's eviction skips it meanwhile
  deps.index.pin(entry.digest)
  let pinned = true
  const release = () => {
    if (!pinned) return
    pinned = false
    deps.index.unpin(entry.digest)
  }
  return { kind: "content", status, headers, body: { file: deps.blobs.blobPath(entry.digest), start, end, release } }
}

/**
 * Serves bytes made from an entry (metadata rewritten for this client) with the entry's headers,
 * an ETag of their own, conditional requests and ranges.
 */
export const serveDerived = (
  entry: CacheEntry,
  bytes: Buffer,
  etag: string,
  request: RepositoryRequest,
  deps: EntryDeps,
  extraHeaders: Record<string, string> = {}
): RepositoryReply => {
  const planned = plan({ ...entry, size: bytes.length }, request, deps, extraHeaders, etag)
  if (planned.done !== undefined) return planned.done
  const { status, headers, start, end, partial } = planned
  return { kind: "content", status, headers, body: partial ? bytes.subarray(start, end + 1) : bytes }
}

export const serveEntry = async (
  entry: CacheEntry,
  request: RepositoryRequest,
  deps: EntryDeps,
  extraHeaders: Record<string, string> = {}
): Promise<RepositoryReply> => {
  const reply = serveEntrySync(entry, request, deps, extraHeaders)
  if (reply !== undefined) return reply
  const body = await fs.readFile(deps.blobs.blobPath(entry.digest))
  if (body.length !== entry.size) throw new Error(`blob ${entry.digest} has ${body.length} bytes, the index says ${entry.size}`)
  deps.smallBlobs.set(entry.digest, body)
  return serveEntrySync(entry, request, deps, extraHeaders)!
}
