// BlobStore and Index against a temp directory: content addressing, scoped writers, digest checks,
// reference counts and start-up repair.
import { createHash } from "node:crypto"
import { existsSync, readdirSync, rmSync } from "node:fs"
import { text } from "node:stream/consumers"
import t from "tap"
import { Effect, type Scope } from "effect"
import { BlobStore } from "../../src/storage/BlobStore.ts"
import { entryKey, Index } from "../../src/storage/Index.ts"
import { makeSmallBlobCache } from "../../src/storage/SmallBlobCache.ts"
import { tempDir } from "../support/appliance.ts"

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))
const digestOf = (data: string) => "sha256:" + createHash("sha256").update(data).digest("hex")

const store = async (blobs: BlobStore["Service"], data: string) => {
  const writer = await blobs.beginUnscoped()
  await writer.write(Buffer.from(data))
  return writer.commit()
}

t.test("a committed blob is stored under its digest and reads back, whole and by range", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const writer = yield* Effect.promise(() => blobs.beginUnscoped())
    yield* Effect.promise(() => writer.write(Buffer.from("hello ")))
    yield* Effect.promise(() => writer.write(Buffer.from("world")))
    t.equal(writer.written(), 11)
    const { digest, size } = yield* Effect.promise(() => writer.commit())
    t.equal(digest, digestOf("hello world"))
    t.equal(size, 11)
    t.match(blobs.blobPath(digest), new RegExp(`blobs/sha256/${digest.slice(7, 9)}/${digest.slice(9)}$`))
    t.same(readdirSync(`${dir}/tmp`), [], "nothing left in tmp/")
    const whole = yield* blobs.open(digest)
    t.equal(yield* Effect.promise(() => text(whole)), "hello world")
    const range = yield* blobs.open(digest, { start: 6, end: 10 })
    t.equal(yield* Effect.promise(() => text(range)), "world")
    const missing = yield* Effect.flip(blobs.open(digestOf("absent")))
    t.equal(missing._tag, "BlobNotFound")
  }))
})

t.test("writers that are not committed leave nothing behind", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const cancelled = yield* Effect.promise(() => blobs.beginUnscoped())
    yield* Effect.promise(() => cancelled.write(Buffer.from("partial")))
    yield* Effect.promise(() => cancelled.cancel())
    t.same(readdirSync(`${dir}/tmp`), [], "cancel removes the temp file")
    yield* Effect.scoped(Effect.gen(function*() {
      const scoped = yield* blobs.begin()
      yield* Effect.promise(() => scoped.write(Buffer.from("forgotten")))
      t.equal(readdirSync(`${dir}/tmp`).length, 1, "the temp file exists while the scope is open")
    }))
    t.same(readdirSync(`${dir}/tmp`), [], "closing the scope without commit removes it")
    const wrong = yield* Effect.promise(() => blobs.beginUnscoped())
    yield* Effect.promise(() => wrong.write(Buffer.from("actual bytes")))
    const error = yield* Effect.promise(() => wrong.commit(digestOf("expected bytes")).then(() => undefined, (e: Error) => e))
    t.match(error?.message, /does not match the expected/, "a digest mismatch refuses the commit")
    t.same(readdirSync(`${dir}/tmp`), [], "and removes the temp file")
    t.notOk(existsSync(blobs.blobPath(digestOf("actual bytes"))), "and stores no blob")
    t.throws(() => blobs.blobPath("sha256:../../etc/passwd"), "a non-digest never becomes a path")
  }))
})

t.test("index entries move blob references; repair drops entries whose blob is gone", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const index = yield* Index.make(dir)
    const a = yield* Effect.promise(() => store(blobs, "first version"))
    const b = yield* Effect.promise(() => store(blobs, "second version"))
    yield* Effect.promise(() => index.commitEntry("raw", "f.txt", { digest: a.digest, size: a.size, fetchedAt: 1 }))
    yield* Effect.promise(() => index.commitEntry("raw-2", "same.txt", { digest: a.digest, size: a.size, fetchedAt: 1 }))
    t.equal(index.getBlob(a.digest)?.refs, 2, "two entries reference the same blob")
    t.same(index.stats, { blobs: 1, bytes: a.size }, "stored once")
    yield* Effect.promise(() => index.commitEntry("raw", "f.txt", { digest: b.digest, size: b.size, fetchedAt: 2 }))
    t.equal(index.getBlob(a.digest)?.refs, 1, "replacing an entry releases its old blob")
    t.equal(index.getBlob(b.digest)?.refs, 1)
    t.equal(index.getEntry("raw", "f.txt")?.digest, b.digest, "the entry reads back (and its cached copy is fresh)")
    t.same(index.stats, { blobs: 2, bytes: a.size + b.size })

    yield* Effect.promise(() => index.putNegative("raw", "gone.txt", { status: 404, expiresAt: 123 }))
    t.same(index.getNegative("raw", "gone.txt"), { status: 404, expiresAt: 123 })

    rmSync(blobs.blobPath(a.digest))
    const repaired = yield* Effect.promise(() => index.repair(blobs.exists))
    t.equal(repaired.droppedEntries, 1, "the entry whose blob file vanished is dropped")
    t.equal(index.getEntry("raw-2", "same.txt"), undefined)
    t.equal(index.getEntry("raw", "f.txt")?.digest, b.digest, "others are kept")
    t.same(index.stats, { blobs: 1, bytes: b.size })
  }))
})

t.test("long paths are hashed below LMDB's key limit", async (t) => {
  const long = "a/".repeat(2000) + "file.tgz"
  const key = entryKey("npm-proxy", long)
  t.ok(Buffer.byteLength(key) < 1978, "under the limit")
  t.ok(key.startsWith("npm-proxy\u0000#"), "marked as hashed")
  t.not(entryKey("npm-proxy", long + "x"), key, "distinct paths stay distinct")
  t.equal(entryKey("raw", "short/path"), "raw\u0000short/path", "short paths are kept as they are")
})

t.test("the small-blob cache keeps the most recent blobs within its budget", async (t) => {
  const cache = makeSmallBlobCache(10, 6)
  cache.set("a", Buffer.from("aaaa"))
  cache.set("b", Buffer.from("bbbb"))
  t.ok(cache.get("a"), "a used: b is now the least recent")
  cache.set("c", Buffer.from("cccc"))
  t.equal(cache.get("b"), undefined, "b evicted to stay within 10 bytes")
  t.ok(cache.get("a"))
  t.ok(cache.get("c"))
  cache.set("big", Buffer.from("too large"))
  t.equal(cache.get("big"), undefined, "blobs over the size limit are not kept")
})
