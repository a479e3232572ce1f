// One upstream object in flight. The first request starts it; every concurrent request for the same
// object joins it and streams the bytes as they land in the temp file (followers read the growing
// file, nobody waits for the end). The fetch verifies length/digest before it commits; a failed or
// truncated fetch commits nothing and every follower's stream ends in an error.
import { createHash, type Hash } from "node:crypto"
import { promises as fs } from "node:fs"
import type { FileHandle } from "node:fs/promises"
import { Readable } from "node:stream"
import { DigestMismatchError, type BlobWriter, type ByteRange } from "../storage/BlobStore.ts"
import type { UpstreamResponse } from "./UpstreamClient.ts"

/** What the upstream answered, known as soon as its headers arrive. */
export type FetchHead =
  | {
    readonly kind: "body"
    readonly status: number
    /** declared length, when the upstream declared one */
    readonly size: number | undefined
    readonly contentType: string | undefined
    readonly upstreamEtag: string | undefined
    readonly lastModified: string | undefined
    /** the upstream's Docker-Content-Digest, for formats that publish one */
    readonly upstreamDigest: string | undefined
  }
  | { readonly kind: "not-modified" }
  | { readonly kind: "status"; readonly status: number; readonly retryAfter: string | undefined; readonly body: string }
  | { readonly kind: "unreachable"; readonly message: string }

export type FetchOutcome =
  | { readonly ok: true; readonly digest: string; readonly size: number }
  | { readonly ok: false; readonly reason: "Truncated" | "DigestMismatch" | "Failed" | "Crashed"; readonly message: string }

export interface Fetch {
  readonly key: string
  readonly head: Promise<FetchHead>
  readonly done: Promise<FetchOutcome>
  readonly written: () => number
  readonly tempPath: () => string | undefined
  /** resolves at the next progress (bytes written, or the end) */
  readonly progress: () => Promise<void>
}

export interface FetchPlan {
  readonly key: string
  /** sends the upstream request; resolves with its response or a reason it could not */
  readonly send: () => Promise<UpstreamResponse | { readonly unreachable: string }>
  readonly beginWrite: () => Promise<BlobWriter>
  /**
   * digest the content must have, when the format publishes one (known once headers arrive):
   * "sha256:<hex>", or "sha512:"/"sha384:"/"sha1:" for formats that publish those
   */
  readonly expectedDigest?: (head: Extract<FetchHead, { kind: "body" }>) => string | undefined
  /** size the content must have, when the format publishes one */
  readonly expectedSize?: number | undefined
  /** commit the verified blob to the index; runs before `done` resolves */
  readonly commit: (head: Extract<FetchHead, { kind: "body" }>, digest: string, size: number) => Promise<void>
  /** body statuses that are content (others are passed through as a status) */
  readonly isContent?: (status: number) => boolean
  readonly onBytes?: (bytes: number) => void
}

const maxErrorBody = 16 * 1024

const readSmall = async (body: NodeJS.ReadableStream): Promise<string> => {
  let text = ""
  for await (const chunk of body) {
    if (text.length < maxErrorBody) text += chunk.toString()
  }
  return text.slice(0, maxErrorBody)
}

const firstHeader = (value: string | Array<string> | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value

export const startFetch = (plan: FetchPlan): Fetch => {
  let written = 0
  let tempPath: string | undefined
  let waiters: Array<() => void> = []
  const notify = () => {
    const current = waiters
    waiters = []
    for (const wake of current) wake()
  }
  let resolveHead!: (head: FetchHead) => void
  const head = new Promise<FetchHead>((resolve) => (resolveHead = resolve))

  const run = async (): Promise<FetchOutcome> => {
    const response = await plan.send()
    if ("unreachable" in response) {
      resolveHead({ kind: "unreachable", message: response.unreachable })
      return { ok: false, reason: "Failed", message: response.unreachable }
    }
    const { status, headers, body } = response
    if (status === 304) {
      body.resume()
      resolveHead({ kind: "not-modified" })
      return { ok: false, reason: "Failed", message: "not modified" }
    }
    if (!(plan.isContent ?? ((s: number) => s === 200))(status)) {
      const text = await readSmall(body).catch(() => "")
      resolveHead({ kind: "status", status, retryAfter: firstHeader(headers["retry-after"]), body: text })
      return { ok: false, reason: "Failed", message: `upstream answered ${status}` }
    }
    const declared = headers["content-length"] === undefined ? undefined : Number(headers["content-length"])
    const bodyHead = {
      kind: "body" as const,
      status,
      size: Number.isSafeInteger(declared) ? declared : undefined,
      contentType: headers["content-type"],
      upstreamEtag: firstHeader(headers.etag),
      lastModified: firstHeader(headers["last-modified"]),
      upstreamDigest: firstHeader(headers["docker-content-digest"])
    }
    let writer: BlobWriter
    try {
      writer = await plan.beginWrite()
    } catch (error) {
      body.destroy()
      resolveHead({ kind: "unreachable", message: `cannot store: ${error}` })
      return { ok: false, reason: "Failed", message: String(error) }
    }
    tempPath = writer.tempPath
    const expected = plan.expectedDigest?.(bodyHead)
    const colon = expected?.indexOf(":") ?? -1
    const otherAlgorithm = expected !== undefined && !expected.startsWith("sha256:") ? expected.slice(0, colon) : undefined
    // the blob store hashes sha256; a format that publishes another algorithm is checked here too
    let otherHash: Hash | undefined
    try {
      otherHash = otherAlgorithm === undefined ? undefined : createHash(otherAlgorithm)
    } catch {
      body.destroy()
      await writer.cancel()
      resolveHead({ kind: "unreachable", message: `unsupported checksum ${expected}` })
      return { ok: false, reason: "DigestMismatch", message: `unsupported checksum ${expected}` }
    }
    resolveHead(bodyHead)
    try {
      // The upstream's bytes are written in arrival order; the socket is paused while the disk
      // catches up, so memory stays flat.
      let failure: Error | undefined
      body.once("error", (error) => (failure = error))
      const ended = new Promise<boolean>((resolve) => {
        body.once("end", () => resolve(true))
        body.once("close", () => resolve(body.readableEnded))
        body.once("aborted", () => resolve(false))
      })
      for await (const chunk of body.iterator({ destroyOnReturn: true })) {
        await writer.write(chunk as Buffer)
        otherHash?.update(chunk as Buffer)
        written = writer.written()
        plan.onBytes?.((chunk as Buffer).length)
        notify()
      }
      const complete = (await ended) && failure === undefined && body.complete
      if (!complete || (bodyHead.size !== undefined && written !== bodyHead.size)) {
        await writer.cancel()
        return {
          ok: false,
          reason: "Truncated",
          message: `upstream body ended after ${written} of ${bodyHead.size ?? "?"} bytes${failure ? `: ${failure.message}` : ""}`
        }
      }
      if (plan.expectedSize !== undefined && written !== plan.expectedSize) {
        await writer.cancel()
        return { ok: false, reason: "DigestMismatch", message: `content has ${written} bytes, its metadata says ${plan.expectedSize}` }
      }
      if (otherHash !== undefined) {
        const actual = `${otherAlgorithm}:${otherHash.digest("hex")}`
        if (actual !== expected) {
          await writer.cancel()
          return { ok: false, reason: "DigestMismatch", message: new DigestMismatchError(expected!, actual).message }
        }
      }
      const { digest, size } = await writer.commit(otherHash === undefined ? expected : undefined)
      await plan.commit(bodyHead, digest, size)
      return { ok: true, digest, size }
    } catch (error) {
      await writer.cancel().catch(() => undefined)
      body.destroy()
      const message = error instanceof Error ? error.message : String(error)
      return { ok: false, reason: error instanceof DigestMismatchError ? "DigestMismatch" : "Truncated", message }
    }
  }

  const done = run()
    .catch((error): FetchOutcome => {
      // a bug, not an upstream failure: followers get an error, the next request starts afresh
      resolveHead({ kind: "unreachable", message: `internal error while fetching: ${error}` })
      return { ok: false, reason: "Crashed", message: error instanceof Error ? error.stack ?? error.message : String(error) }
    })
    .finally(notify)

  return {
    key: plan.key,
    head,
    done,
    written: () => written,
    tempPath: () => tempPath,
    progress: () => new Promise<void>((resolve) => waiters.push(resolve))
  }
}

const chunkSize = 256 * 1024

/** Opens the fetch's temp file, or its blob once it has been committed (renamed into place). */
export const openFollowed = async (fetch: Fetch, blobPath: (digest: string) => string): Promise<FileHandle> => {
  const temp = fetch.tempPath()
  if (temp !== undefined) {
    try {
      return await fs.open(temp, "r")
    } catch {
      // renamed into place (committed) meanwhile: read the blob instead
    }
  }
  const outcome = await fetch.done
  if (!outcome.ok) throw new Error(outcome.message)
  return fs.open(blobPath(outcome.digest), "r")
}

/**
 * A stream of a fetch's bytes (or a range of them) read from its temp file as they land. It ends
 * cleanly only when the fetch committed; otherwise it is destroyed with the fetch's error.
 */
export const followerStream = (
  fetch: Fetch,
  blobPath: (digest: string) => string,
  range?: ByteRange
): Readable => {
  let position = range?.start ?? 0
  const end = range === undefined ? Number.POSITIVE_INFINITY : range.end + 1
  let handle: FileHandle | undefined
  let settled: FetchOutcome | undefined
  void fetch.done.then((outcome) => (settled = outcome))

  return new Readable({
    highWaterMark: chunkSize,
    read() {
      void (async () => {
        try {
          handle ??= await openFollowed(fetch, blobPath)
          for (;;) {
            if (position >= end) return void this.push(null)
            // The last byte is held back until the fetch is verified and committed: a client that
            // has every declared byte takes the body as complete, so it must not get them early.
            const written = settled?.ok ? fetch.written() : Math.max(0, fetch.written() - 1)
            const available = Math.min(written, end)
            if (position < available) {
              const buffer = Buffer.allocUnsafe(Math.min(chunkSize, available - position))
              const { bytesRead } = await handle.read(buffer, 0, buffer.length, position)
              if (bytesRead === 0) throw new Error("blob file shorter than written bytes")
              position += bytesRead
              this.push(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead))
              return
            }
            if (settled !== undefined) {
              if (!settled.ok) throw new Error(settled.message)
              if (position >= settled.size) return void this.push(null)
              continue
            }
            await Promise.race([fetch.progress(), fetch.done])
          }
        } catch (error) {
          this.destroy(error instanceof Error ? error : new Error(String(error)))
        }
      })()
    },
    destroy(error, callback) {
      const closing = handle?.close()
      handle = undefined
      void Promise.resolve(closing).catch(() => undefined).then(() => callback(error))
    }
  })
}
