// BlobStore and Index against a temp directory: content addressing, ranges, scoped writers, digest
// checks, reference counts, long keys and start-up repair.
import { createHash } from "node:crypto"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { text } from "node:stream/consumers"
import t from "tap"
import { Effect, type Scope } from "effect"
import { BlobStore, type BlobWriter } from "../../src/storage/BlobStore.ts"
import { entryKey, Index } from "../../src/storage/Index.ts"

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "larder-store-"))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}
const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))
const sha256 = (data: string | Buffer) => "sha256:" + createHash("sha256").update(data).digest("hex")
const promise = <A>(f: () => Promise<A>) => Effect.promise(f)
const write = (writer: BlobWriter, ...chunks: ReadonlyArray<string>) =>
  promise(async () => {
    for (const chunk of chunks) await writer.write(Buffer.from(chunk))
  })
const store = (blobs: BlobStore["Service"], data: string) =>
  promise(async () => {
    const writer = await blobs.beginUnscoped()
    await writer.write(Buffer.from(data))
    return writer.commit()
  })

t.test("a committed blob is stored under its digest and reads back, whole and by range", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const writer = yield* promise(() => blobs.beginUnscoped())
    yield* write(writer, "hello ", "world")
    t.same(writer.written(), 11, "written() counts the bytes so far")
    t.same(readdirSync(join(dir, "tmp")).length, 1, "the temp file exists until commit")
    const committed = yield* promise(() => writer.commit())
    const digest = sha256("hello world")
    t.same(committed, { digest, size: 11 }, "digest is the sha256 of the bytes, size their count")
    const hex = digest.slice("sha256:".length)
    const expectedPath = join(dir, "blobs", "sha256", hex.slice(0, 2), hex.slice(2))
    t.same(blobs.blobPath(digest), expectedPath, "under blobs/sha256/<2 hex>/<rest>")
    t.same(readdirSync(join(dir, "blobs", "sha256")), [hex.slice(0, 2)])
    t.same(readFileSync(expectedPath, "utf8"), "hello world", "the file holds the bytes")
    t.same(readdirSync(join(dir, "tmp")), [], "nothing left in tmp/")
    t.same(yield* promise(() => blobs.exists(digest)), true, "exists")
    t.same(yield* promise(() => blobs.size(digest)), 11, "size")
    t.same(yield* promise(() => blobs.list()), [digest], "list")

    const reads: ReadonlyArray<readonly [label: string, range: { start: number; end: number } | undefined, expected: string]> = [
      ["whole blob", undefined, "hello world"],
      ["a middle range", { start: 6, end: 10 }, "world"],
      ["first byte", { start: 0, end: 0 }, "h"],
      ["range up to the last byte", { start: 4, end: 10 }, "o world"],
      ["end beyond the size stops at the end", { start: 6, end: 100 }, "world"]
    ]
    for (const [label, range, expected] of reads) {
      const stream = yield* blobs.open(digest, range)
      t.same(yield* promise(() => text(stream)), expected, label)
    }

    const absent = sha256("absent")
    const missing = yield* Effect.flip(blobs.open(absent))
    t.same({ tag: missing._tag, digest: missing.digest }, { tag: "BlobNotFound", digest: absent }, "a missing blob is BlobNotFound")
    t.same(yield* promise(() => blobs.exists(absent)), false)
    t.same(yield* promise(() => blobs.size(absent)), undefined)

    yield* promise(() => blobs.remove(digest))
    t.same(existsSync(expectedPath), false, "remove deletes the file")
  }))
})

t.test("an empty blob and a repeated blob", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    t.same(yield* store(blobs, ""), { digest: sha256(""), size: 0 }, "empty content has the empty digest")
    const first = yield* store(blobs, "same")
    const second = yield* store(blobs, "same")
    t.same(second, first, "the same bytes commit to the same digest")
    t.same([...(yield* promise(() => blobs.list()))].sort(), [sha256(""), sha256("same")].sort(), "stored once each")
    t.same(readdirSync(join(dir, "tmp")), [])
  }))
})

t.test("writers that are not committed leave nothing behind", async (t) => {
  const dir = tempDir()
  const tmp = join(dir, "tmp")
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)

    const cancelled = yield* promise(() => blobs.beginUnscoped())
    yield* write(cancelled, "partial")
    t.same(readdirSync(tmp).length, 1, "the temp file exists before cancel")
    yield* promise(() => cancelled.cancel())
    t.same(readdirSync(tmp), [], "cancel removes the temp file")
    t.same(yield* promise(() => blobs.list()), [], "and stores no blob")

    yield* Effect.scoped(Effect.gen(function*() {
      const scoped = yield* blobs.begin()
      yield* write(scoped, "forgotten")
      t.same(readdirSync(tmp).length, 1, "a scoped writer's temp file exists while the scope is open")
    }))
    t.same(readdirSync(tmp), [], "closing the scope without commit removes it")
    t.same(yield* promise(() => blobs.list()), [], "and stores no blob")

    const kept = yield* Effect.scoped(Effect.gen(function*() {
      const scoped = yield* blobs.begin()
      yield* write(scoped, "kept")
      return yield* promise(() => scoped.commit())
    }))
    t.same(readdirSync(tmp), [], "a committed scoped writer leaves tmp/ empty")
    t.same(yield* promise(() => blobs.exists(kept.digest)), true, "and its blob survives the scope")

    const mismatches: ReadonlyArray<readonly [label: string, data: string, expected: string]> = [
      ["another content's digest", "actual bytes", sha256("expected bytes")],
      ["a malformed digest", "other bytes", "sha256:nothex"],
      ["an uppercase digest", "more bytes", sha256("more bytes").toUpperCase()]
    ]
    for (const [label, data, expected] of mismatches) {
      const writer = yield* promise(() => blobs.beginUnscoped())
      yield* write(writer, data)
      const error = yield* promise(() => writer.commit(expected).then(() => undefined, (e: Error) => e.message))
      t.same(
        {
          error: error?.includes(`does not match the expected ${expected}`),
          tmp: readdirSync(tmp),
          stored: existsSync(blobs.blobPath(sha256(data)))
        },
        { error: true, tmp: [], stored: false },
        `${label}: commit throws, removes the temp file and stores nothing`
      )
    }

    const right = yield* promise(() => blobs.beginUnscoped())
    yield* write(right, "verified")
    t.same(yield* promise(() => right.commit(sha256("verified"))), { digest: sha256("verified"), size: 8 }, "the right digest commits")
  }))
})

t.test("only sha256 digests become paths", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const cases: ReadonlyArray<readonly [digest: string, valid: boolean]> = [
      [sha256("x"), true],
      ["sha256:../../etc/passwd", false],
      ["sha256:" + "a".repeat(63), false],
      ["sha256:" + "a".repeat(65), false],
      ["sha256:" + "A".repeat(64), false],
      ["sha512:" + "a".repeat(64), false],
      ["a".repeat(64), false],
      ["", false]
    ]
    for (const [digest, valid] of cases) {
      let path: string | undefined
      try {
        path = blobs.blobPath(digest)
      } catch {
        path = undefined
      }
      t.same(path !== undefined && path.startsWith(join(dir, "blobs", "sha256") + "/"), valid, JSON.stringify(digest))
    }
  }))
})

t.test("clearTemp removes leftovers", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const a = yield* promise(() => blobs.beginUnscoped())
    const b = yield* promise(() => blobs.beginUnscoped())
    yield* write(a, "a")
    yield* write(b, "b")
    yield* promise(() => Promise.all([a.cancel(), b.cancel()]))
    const leftovers = [yield* promise(() => blobs.beginUnscoped()), yield* promise(() => blobs.beginUnscoped())]
    t.same(yield* promise(() => blobs.clearTemp()), 2, "two leftovers")
    t.same(readdirSync(join(dir, "tmp")), [])
    yield* promise(() => Promise.all(leftovers.map((w) => w.cancel())))
  }))
})

t.test("index entries move blob references and stats", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const index = yield* Index.make(dir)
    const a = yield* store(blobs, "first version")
    const b = yield* store(blobs, "second version!")
    const refs = () => [index.getBlob(a.digest)?.refs, index.getBlob(b.digest)?.refs]
    const stats = () => ({ blobs: index.stats.blobs, bytes: index.stats.bytes })
    const commit = (repository: string, path: string, blob: { digest: string; size: number }, fetchedAt: number) =>
      promise(() => index.commitEntry(repository, path, { digest: blob.digest, size: blob.size, fetchedAt }))

    t.same({ refs: refs(), stats: stats() }, { refs: [undefined, undefined], stats: { blobs: 0, bytes: 0 } }, "empty index")

    const steps: ReadonlyArray<readonly [label: string, step: Effect.Effect<void>, refs: ReadonlyArray<number | undefined>, stats: { blobs: number; bytes: number }]> = [
      ["first entry for a", commit("raw", "f.txt", a, 1), [1, undefined], { blobs: 1, bytes: a.size }],
      ["recommitting the same digest counts nothing", commit("raw", "f.txt", a, 2), [1, undefined], { blobs: 1, bytes: a.size }],
      ["a second entry for a", commit("raw-2", "same.txt", a, 3), [2, undefined], { blobs: 1, bytes: a.size }],
      ["f.txt moves from a to b", commit("raw", "f.txt", b, 4), [1, 1], { blobs: 2, bytes: a.size + b.size }],
      ["same.txt moves from a to b", commit("raw-2", "same.txt", b, 5), [0, 2], { blobs: 2, bytes: a.size + b.size }],
      ["removing f.txt releases b", promise(() => index.removeEntry("raw", "f.txt")), [0, 1], { blobs: 2, bytes: a.size + b.size }],
      ["removing an absent entry changes nothing", promise(() => index.removeEntry("raw", "f.txt")), [0, 1], { blobs: 2, bytes: a.size + b.size }]
    ]
    for (const [label, step, expectedRefs, expectedStats] of steps) {
      yield* step
      t.same({ refs: refs(), stats: stats() }, { refs: expectedRefs, stats: expectedStats }, label)
    }
    t.same(index.getEntry("raw-2", "same.txt"), { digest: b.digest, size: b.size, fetchedAt: 5 }, "the entry reads back")
    t.same(index.getEntry("raw", "f.txt"), undefined, "the removed entry is gone")

    yield* promise(() => index.putNegative("raw", "gone.txt", { status: 404, expiresAt: 123 }))
    t.same(index.getNegative("raw", "gone.txt"), { status: 404, expiresAt: 123 }, "negative entry")
    yield* commit("raw", "gone.txt", a, 6)
    t.same(index.getNegative("raw", "gone.txt"), undefined, "a commit clears the negative entry")
  }))
})

t.test("stats survive reopening the index", async (t) => {
  const dir = tempDir()
  const sizes = await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const index = yield* Index.make(dir)
    const a = yield* store(blobs, "one")
    const b = yield* store(blobs, "three")
    yield* promise(() => index.commitEntry("raw", "a", { digest: a.digest, size: a.size, fetchedAt: 1 }))
    yield* promise(() => index.commitEntry("raw", "b", { digest: b.digest, size: b.size, fetchedAt: 1 }))
    return a.size + b.size
  }))
  const reopened = await run(Effect.gen(function*() {
    const index = yield* Index.make(dir)
    return { stats: { blobs: index.stats.blobs, bytes: index.stats.bytes }, entry: index.getEntry("raw", "a")?.size }
  }))
  t.same(reopened, { stats: { blobs: 2, bytes: sizes }, entry: 3 })
})

t.test("repair drops entries whose blob file was deleted", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const index = yield* Index.make(dir)
    const a = yield* store(blobs, "will vanish")
    const b = yield* store(blobs, "stays")
    yield* promise(() => index.commitEntry("raw", "a1", { digest: a.digest, size: a.size, fetchedAt: 1 }))
    yield* promise(() => index.commitEntry("raw", "a2", { digest: a.digest, size: a.size, fetchedAt: 1 }))
    yield* promise(() => index.commitEntry("raw", "b", { digest: b.digest, size: b.size, fetchedAt: 1 }))

    const cleanRun = yield* promise(() => index.repair(blobs.exists))
    t.same(cleanRun, { droppedEntries: 0 }, "nothing to repair while every file exists")

    rmSync(blobs.blobPath(a.digest))
    const repaired = yield* promise(() => index.repair(blobs.exists))
    t.same(
      {
        repaired,
        a1: index.getEntry("raw", "a1"),
        a2: index.getEntry("raw", "a2"),
        b: index.getEntry("raw", "b")?.digest,
        blobA: index.hasBlobRecord(a.digest),
        blobB: index.hasBlobRecord(b.digest),
        stats: { blobs: index.stats.blobs, bytes: index.stats.bytes }
      },
      {
        repaired: { droppedEntries: 2 },
        a1: undefined,
        a2: undefined,
        b: b.digest,
        blobA: false,
        blobB: true,
        stats: { blobs: 1, bytes: b.size }
      },
      "both entries of the missing blob and its record are dropped; the rest is kept"
    )
    t.same(yield* promise(() => index.repair(blobs.exists)), { droppedEntries: 0 }, "repair is idempotent")
  }))
})

t.test("entryKey keeps keys below LMDB's limit", async (t) => {
  const hashed = (repository: string, path: string) => `${repository}\u0000\u0001${createHash("sha256").update(path).digest("hex")}`
  const boundary = "x".repeat(1900 - "raw".length - 1)
  const cases: ReadonlyArray<readonly [label: string, repository: string, path: string, expected: string]> = [
    ["short path kept as it is", "raw", "short/path", "raw\u0000short/path"],
    ["empty path", "raw", "", "raw\u0000"],
    ["exactly 1900 bytes kept", "raw", boundary, `raw\u0000${boundary}`],
    ["1901 bytes hashed", "raw", boundary + "y", hashed("raw", boundary + "y")],
    ["long ASCII path hashed", "npm-proxy", "a/".repeat(2000) + "file.tgz", hashed("npm-proxy", "a/".repeat(2000) + "file.tgz")],
    ["multi-byte characters count as bytes", "raw", "é".repeat(950), hashed("raw", "é".repeat(950))],
    ["multi-byte just under the limit kept", "raw", "é".repeat(948), `raw\u0000${"é".repeat(948)}`]
  ]
  for (const [label, repository, path, expected] of cases) {
    const key = entryKey(repository, path)
    t.same({ key, short: Buffer.byteLength(key) < 1978 }, { key: expected, short: true }, label)
  }
  const long = "a/".repeat(2000)
  t.not(entryKey("raw", long + "x"), entryKey("raw", long + "y"), "distinct long paths stay distinct")
  t.not(entryKey("raw", long), entryKey("raw-2", long), "and distinct per repository")
  const maxName = "r".repeat(200)
  t.same(Buffer.byteLength(entryKey(maxName, long)) < 1978, true, "a 200-character repository name still fits")
  const digestOfLong = createHash("sha256").update(long).digest("hex")
  t.not(
    entryKey("raw", "#" + digestOfLong),
    entryKey("raw", long),
    "a short path spelled like a hashed key does not collide with the long path"
  )
})

t.test("index entries with long paths round-trip", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const index = yield* Index.make(dir)
    const a = yield* store(blobs, "long")
    const long = "dir/".repeat(1000) + "file"
    yield* promise(() => index.commitEntry("raw", long, { digest: a.digest, size: a.size, fetchedAt: 1 }))
    t.same(index.getEntry("raw", long)?.digest, a.digest, "a path over the key limit is stored and found")
    t.same(index.getEntry("raw", long + "x"), undefined, "a different long path is not")
  }))
})

t.test("invalidate hands each entry's path to the chooser and drops only the chosen", async (t) => {
  const dir = tempDir()
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const index = yield* Index.make(dir)
    const a = yield* store(blobs, "metadata")
    const b = yield* store(blobs, "content")
    yield* promise(() => index.commitEntry("npm", "left-pad", { digest: a.digest, size: a.size, fetchedAt: 1 }))
    yield* promise(() => index.commitEntry("npm", "left-pad/-/left-pad-1.0.0.tgz", { digest: b.digest, size: b.size, fetchedAt: 1 }))
    yield* promise(() => index.commitEntry("npm-other", "left-pad", { digest: a.digest, size: a.size, fetchedAt: 1 }))
    yield* promise(() => index.putNegative("npm", "missing", { status: 404, expiresAt: Date.now() + 60_000 }))
    t.ok(index.getEntry("npm", "left-pad"), "read once, so the decoded-entry cache holds it")
    const seen: Array<string | undefined> = []
    const dropped = yield* promise(() => index.invalidate("npm", (path) => (seen.push(path), path !== undefined && !path.endsWith(".tgz"))))
    t.same(seen.sort(), ["left-pad", "left-pad/-/left-pad-1.0.0.tgz"], "paths as strings, only this repository's")
    t.equal(dropped, 1)
    t.equal(index.getEntry("npm", "left-pad"), undefined, "metadata dropped")
    t.ok(index.getEntry("npm", "left-pad/-/left-pad-1.0.0.tgz"), "content kept")
    t.ok(index.getEntry("npm-other", "left-pad"), "another repository untouched")
    t.equal(index.getNegative("npm", "missing"), undefined, "negative entries dropped")
    t.ok(index.getEntry("npm-other", "left-pad"), "cached too")
    yield* promise(() => index.removeRepository("npm-other"))
    t.equal(index.getEntry("npm-other", "left-pad"), undefined, "a removed repository's entries are gone from the cache as well")
  }))
})
