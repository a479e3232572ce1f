// Eviction: each policy's ordering decisions, and the index keeping a blob store quota in one
// transaction per commit (entries and blobs go together, pinned blobs stay, files deleted after).
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import t from "tap"
import { Effect, type Scope } from "effect"
import { makeGreedyDual, makeLru, makePolicy, makeS3Fifo, policyNames, type EvictionPolicy } from "../../src/storage/eviction/policies.ts"
import { BlobStore } from "../../src/storage/BlobStore.ts"
import { Index } from "../../src/storage/Index.ts"

const drain = (policy: EvictionPolicy, pinned?: (key: string) => boolean) => {
  const order: Array<string> = []
  for (let key = policy.victim(pinned); key !== undefined; key = policy.victim(pinned)) order.push(key)
  return order
}

t.test("LRU: least recently used first; an access moves a key to the back", async (t) => {
  const lru = makeLru()
  for (const key of ["a", "b", "c", "d"]) lru.insert(key, 10)
  lru.access("a")
  lru.access("c")
  t.same(drain(lru), ["b", "d", "a", "c"])
})

t.test("GDSF (cost 1): among equally popular objects the biggest goes first; popularity outweighs size", async (t) => {
  const gdsf = makeGreedyDual("one")
  gdsf.insert("small", 1_000)
  gdsf.insert("big", 1_000_000)
  gdsf.insert("medium", 10_000)
  t.equal(gdsf.victim(), "big")
  gdsf.insert("hot-big", 1_000_000)
  for (let i = 0; i < 1000; i++) gdsf.access("hot-big")
  t.same(drain(gdsf), ["medium", "small", "hot-big"], "1001 requests of 1 MB beat one request of 10 kB")
})

t.test("LFU-DA: least frequently used first, and old popularity ages out", async (t) => {
  const lfu = makeGreedyDual("size")
  lfu.insert("once", 5)
  lfu.insert("twice", 500)
  lfu.access("twice")
  lfu.insert("thrice", 50)
  lfu.access("thrice")
  lfu.access("thrice")
  t.equal(lfu.victim(), "once", "frequency decides, not size")
  // every later arrival starts at the evicted priority (1): a newcomer with 2 requests outranks
  // an old object with 2
  lfu.insert("new", 5)
  lfu.access("new")
  t.same(drain(lfu), ["twice", "thrice", "new"])
})

t.test("S3-FIFO: one-hit wonders leave from the small queue first; re-requested objects stay in main", async (t) => {
  const s3 = makeS3Fifo(1000)
  for (const key of ["hot-1", "hot-2"]) s3.insert(key, 40)
  s3.access("hot-1")
  s3.access("hot-2")
  for (const key of ["once-1", "once-2", "once-3", "once-4", "once-5"]) s3.insert(key, 40)
  // the small queue (10% = 100 bytes) is over its share: it is evicted from first
  t.same([s3.victim(), s3.victim(), s3.victim()], ["once-1", "once-2", "once-3"], "the re-requested ones moved to main")
  t.ok(s3.has("hot-1") && s3.has("hot-2"))
  // a key evicted from the small queue is remembered: its next insert goes straight to main
  s3.insert("once-1", 40)
  s3.insert("fresh", 40)
  t.equal(s3.victim(), "once-4", "small is over its share again: its oldest goes")
  t.ok(s3.has("once-1"), "the ghost hit went to main")
})

t.test("every policy skips pinned keys, forgets removed ones and ends empty", async (t) => {
  for (const name of policyNames) {
    const policy = makePolicy(name, 1000)
    for (const key of ["a", "b", "c", "d"]) policy.insert(key, 100)
    policy.remove("c")
    t.notOk(policy.has("c"), `${name}: removed`)
    const order = drain(policy, (key) => key === "a")
    t.same([...order].sort(), ["b", "d"], `${name}: a is pinned, c was removed`)
    t.ok(policy.has("a"), `${name}: the pinned key is still there`)
    t.same(drain(policy), ["a"], `${name}: once unpinned it can go`)
  }
})

const tempDir = () => mkdtempSync(join(tmpdir(), "larder-eviction-"))
const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))
const store = (blobs: BlobStore["Service"], size: number, fill: number) =>
  Effect.gen(function*() {
    const writer = yield* Effect.promise(() => blobs.beginUnscoped())
    yield* Effect.promise(() => writer.write(Buffer.alloc(size, fill)))
    return yield* Effect.promise(() => writer.commit())
  })

t.test("the index keeps the quota at every commit: whole blobs with all their entries, pinned ones kept", async (t) => {
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const removed: Array<string> = []
    const index = yield* Index.make(dir, { quotaBytes: 1000, policy: "lru", removeBlob: (digest) => (removed.push(digest), blobs.remove(digest)) })
    const commit = (path: string, blob: { digest: string; size: number }, at: number) =>
      Effect.promise(() => index.commitEntry("raw", path, { digest: blob.digest, size: blob.size, fetchedAt: at }))
    const a = yield* store(blobs, 400, 1)
    const b = yield* store(blobs, 400, 2)
    const c = yield* store(blobs, 400, 3)
    yield* commit("a", a, 1)
    yield* commit("a-again", a, 2)
    yield* commit("b", b, 3)
    t.same({ bytes: index.stats.bytes, evictions: index.stats.evictions }, { bytes: 800, evictions: 0 }, "under the quota")

    yield* commit("c", c, 4)
    t.same({ bytes: index.stats.bytes, blobs: index.stats.blobs, evictions: index.stats.evictions, evictedBytes: index.stats.evictedBytes }, { bytes: 800, blobs: 2, evictions: 1, evictedBytes: 400 }, "a made room")
    t.equal(index.getEntry("raw", "a"), undefined, "every entry naming the evicted blob went with it")
    t.equal(index.getEntry("raw", "a-again"), undefined)
    t.ok(index.getEntry("raw", "b") && index.getEntry("raw", "c"))
    t.same(removed, [a.digest], "its file was deleted after the commit")
    t.notOk(existsSync(blobs.blobPath(a.digest)))

    index.pin(b.digest)
    const d = yield* store(blobs, 400, 4)
    yield* commit("d", d, 5)
    t.ok(index.getEntry("raw", "b"), "b is pinned (being served): c went instead")
    t.equal(index.getEntry("raw", "c"), undefined)
    index.unpin(b.digest)
    const e = yield* store(blobs, 400, 5)
    yield* commit("e", e, 6)
    t.equal(index.getEntry("raw", "b"), undefined, "unpinned, b is the least recent again")
    t.ok(index.stats.bytes <= 1000, `quota held: ${index.stats.bytes} bytes`)

    const huge = yield* store(blobs, 1500, 6)
    yield* commit("huge", huge, 7)
    t.same({ blobs: index.stats.blobs, bytes: index.stats.bytes }, { blobs: 1, bytes: 1500 }, "an object over the quota empties the rest and is stored alone")
  }))
  // reopened: the reverse references and the policy are rebuilt from the index
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const index = yield* Index.make(dir, { quotaBytes: 1000, policy: "lru", removeBlob: blobs.remove })
    const f = yield* store(blobs, 100, 7)
    yield* Effect.promise(() => index.commitEntry("raw", "f", { digest: f.digest, size: f.size, fetchedAt: 8 }))
    t.equal(index.getEntry("raw", "huge"), undefined, "after a restart the big blob is still known and evicted")
    t.same({ blobs: index.stats.blobs, bytes: index.stats.bytes }, { blobs: 1, bytes: 100 })
  }))
})

t.test("an entry dropped and fetched again is not taken by the eviction of its old blob", async (t) => {
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  await run(Effect.gen(function*() {
    const blobs = yield* BlobStore.make(dir)
    const index = yield* Index.make(dir, { quotaBytes: 1000, policy: "lru", removeBlob: blobs.remove })
    const commit = (path: string, blob: { digest: string; size: number }, at: number) =>
      Effect.promise(() => index.commitEntry("npm", path, { digest: blob.digest, size: blob.size, fetchedAt: at }))
    const old = yield* store(blobs, 400, 1)
    yield* commit("left-pad", old, 1)
    yield* Effect.promise(() => index.invalidate("npm", () => true))
    const fresh = yield* store(blobs, 400, 2)
    yield* commit("left-pad", fresh, 2)
    const other = yield* store(blobs, 400, 3)
    yield* commit("other", other, 3)
    t.notOk(index.hasBlobRecord(old.digest), "the old blob (no longer referenced) was evicted")
    t.equal(index.getEntry("npm", "left-pad")?.digest, fresh.digest, "the entry now naming the new blob stays")
  }))
})
