// Content-addressed blob files: blobs/sha256/<2 hex>/<rest>. A write goes to tmp/ on the same
// filesystem while it is hashed, and becomes a blob only by fsync + rename on commit.
import { createHash, randomUUID, type Hash } from "node:crypto"
import { constants, createReadStream, promises as fs, type ReadStream } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Layer, Schema, type Scope } from "effect"

export class StorageError extends Schema.TaggedError<StorageError>()("StorageError", {
  operation: Schema.String,
  message: Schema.String
}) {}

export class BlobNotFound extends Schema.TaggedError<BlobNotFound>()("BlobNotFound", {
  digest: Schema.String
}) {}

export class DigestMismatchError extends Error {
  constructor(expected: string, actual: string) {
    super(`content digest ${actual} does not match the expected ${expected}`)
  }
}

export interface ByteRange {
  readonly start: number
  /** inclusive */
  readonly end: number
}

/** An open temp file being filled; nothing is visible in the store until `commit`. */
export interface BlobWriter {
  readonly tempPath: string
  /** bytes written so far; followers may read the temp file up to here */
  readonly written: () => number
  readonly write: (chunk: Uint8Array) => Promise<void>
  /**
   * fsync, rename into place; returns the sha256 digest ("sha256:<hex>") and size. With an
   * expected digest that differs, the temp file is removed instead and DigestMismatchError thrown.
   */
  readonly commit: (expectedDigest?: string) => Promise<{ readonly digest: string; readonly size: number }>
  readonly cancel: () => Promise<void>
}

export const isDigest = (digest: string): boolean => /^sha256:[0-9a-f]{64}$/.test(digest)

export const makeBlobPaths = (root: string) => {
  const blobs = join(root, "blobs", "sha256")
  const tmp = join(root, "tmp")
  return {
    blobs,
    tmp,
    blobPath: (digest: string): string => {
      // Digests come from our own hashing or from the index; refuse anything else so no
      // caller can turn a digest into a path outside blobs/.
      if (!isDigest(digest)) throw new Error(`not a sha256 digest: ${digest}`)
      const hex = digest.slice(7)
      return join(blobs, hex.slice(0, 2), hex.slice(2))
    }
  }
}

export const openWriter = async (paths: ReturnType<typeof makeBlobPaths>): Promise<BlobWriter> => {
  const tempPath = join(paths.tmp, randomUUID())
  const handle = await fs.open(tempPath, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o644)
  const hash: Hash = createHash("sha256")
  let written = 0
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await handle.close()
  }
  return {
    tempPath,
    written: () => written,
    write: async (chunk) => {
      hash.update(chunk)
      let offset = 0
      while (offset < chunk.length) {
        const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset, written + offset)
        offset += bytesWritten
      }
      written += chunk.length
    },
    commit: async (expectedDigest) => {
      const digest = "sha256:" + hash.digest("hex")
      if (expectedDigest !== undefined && digest !== expectedDigest) {
        await close()
        await fs.rm(tempPath, { force: true })
        throw new DigestMismatchError(expectedDigest, digest)
      }
      await handle.sync()
      await close()
      const target = paths.blobPath(digest)
      await fs.mkdir(join(target, ".."), { recursive: true })
      await fs.rename(tempPath, target)
      return { digest, size: written }
    },
    cancel: async () => {
      await close()
      await fs.rm(tempPath, { force: true })
    }
  }
}

export class BlobStore extends Context.Service<BlobStore, {
  readonly root: string
  readonly blobPath: (digest: string) => string
  readonly exists: (digest: string) => Promise<boolean>
  readonly size: (digest: string) => Promise<number | undefined>
  /** a stream of the blob's bytes (or a range of them), read with a bounded buffer */
  readonly open: (digest: string, range?: ByteRange) => Effect.Effect<ReadStream, BlobNotFound>
  /** a writer that is cancelled (temp file removed) when the scope closes unless committed */
  readonly begin: () => Effect.Effect<BlobWriter, StorageError, Scope.Scope>
  /** unscoped writer, for fetches whose lifetime is not a scope (the caller must commit or cancel) */
  readonly beginUnscoped: () => Promise<BlobWriter>
  readonly remove: (digest: string) => Promise<void>
  /** start-up repair: removes leftover temp files, returns how many */
  readonly clearTemp: () => Promise<number>
  /** every blob on disk, for start-up repair */
  readonly list: () => Promise<ReadonlyArray<string>>
}>()("larder/storage/BlobStore") {
  static readonly make = (root: string) =>
    Effect.gen(function*() {
      const paths = makeBlobPaths(root)
      yield* Effect.tryPromise({
        try: async () => {
          await fs.mkdir(paths.blobs, { recursive: true })
          await fs.mkdir(paths.tmp, { recursive: true })
        },
        catch: (cause) => new StorageError({ operation: "init", message: `cannot create ${root}: ${cause}` })
      })
      const beginUnscoped = () => openWriter(paths)
      return BlobStore.of({
        root,
        blobPath: paths.blobPath,
        exists: (digest) => isDigest(digest) ? fs.access(paths.blobPath(digest)).then(() => true, () => false) : Promise.resolve(false),
        size: (digest) => isDigest(digest) ? fs.stat(paths.blobPath(digest)).then((s) => s.size, () => undefined) : Promise.resolve(undefined),
        open: (digest, range) =>
          Effect.callback<ReadStream, BlobNotFound>((resume) => {
            if (!isDigest(digest)) return resume(Effect.fail(new BlobNotFound({ digest })))
            const stream = createReadStream(paths.blobPath(digest), {
              highWaterMark: 256 * 1024,
              ...(range === undefined ? {} : { start: range.start, end: range.end })
            })
            stream.once("open", () => resume(Effect.succeed(stream)))
            stream.once("error", () => resume(Effect.fail(new BlobNotFound({ digest }))))
          }),
        begin: () =>
          Effect.acquireRelease(
            Effect.tryPromise({
              try: beginUnscoped,
              catch: (cause) => new StorageError({ operation: "begin", message: String(cause) })
            }),
            // cancel after a commit finds no temp file and does nothing
            (writer) => Effect.promise(() => writer.cancel())
          ),
        beginUnscoped,
        remove: (digest) => fs.rm(paths.blobPath(digest), { force: true }),
        clearTemp: async () => {
          const names = await fs.readdir(paths.tmp)
          await Promise.all(names.map((name) => fs.rm(join(paths.tmp, name), { force: true, recursive: true })))
          return names.length
        },
        list: async () => {
          const digests: Array<string> = []
          for (const prefix of await fs.readdir(paths.blobs)) {
            for (const rest of await fs.readdir(join(paths.blobs, prefix))) digests.push(`sha256:${prefix}${rest}`)
          }
          return digests
        }
      })
    })

  static readonly layer = (root: string) => Layer.effect(BlobStore, BlobStore.make(root))
}
