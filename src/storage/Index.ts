// The LMDB index: what each repository path maps to, which blobs exist and who references them,
// negative (404) entries and repository configurations. One environment, named databases.
import { createHash } from "node:crypto"
import { join } from "node:path"
import { open, type Database, type RootDatabase } from "lmdb"
import { Context, Effect, Layer } from "effect"
import type { Link } from "../protocols/route.ts"

export interface CacheEntry {
  readonly digest: string
  readonly size: number
  readonly contentType?: string | undefined
  readonly upstreamEtag?: string | undefined
  readonly lastModified?: string | undefined
  /** epoch ms of the fetch (or last successful revalidation) */
  readonly fetchedAt: number
}

export interface NegativeEntry {
  readonly status: number
  readonly expiresAt: number
}

export interface BlobRecord {
  readonly size: number
  readonly refs: number
  readonly lastAccess: number
}

const entryCacheSize = 50_000

// LMDB refuses keys over 1978 bytes; keep a margin and hash the path beyond it.
const maxKeyBytes = 1900

export const entryKey = (repository: string, path: string): string => {
  const key = `${repository}\0${path}`
  return Buffer.byteLength(key) <= maxKeyBytes
    ? key
    // \u0001 cannot occur in a request path (control characters are refused), so no short path
    // can spell a hashed key
    : `${repository}\0\u0001${createHash("sha256").update(path).digest("hex")}`
}

export interface IndexStats {
  blobs: number
  bytes: number
}

export class Index extends Context.Service<Index, {
  readonly getEntry: (repository: string, path: string) => CacheEntry | undefined
  /** puts the entry, counts a reference on its blob, releases the blob it replaces, in one transaction */
  readonly commitEntry: (repository: string, path: string, entry: CacheEntry) => Promise<void>
  readonly removeEntry: (repository: string, path: string) => Promise<void>
  readonly getNegative: (repository: string, path: string) => NegativeEntry | undefined
  readonly putNegative: (repository: string, path: string, entry: NegativeEntry) => Promise<void>
  /** what metadata said about content it lists (upstream URL, checksum, size) */
  readonly getLink: (repository: string, key: string) => Link | undefined
  /** records links, replacing earlier ones for the same keys */
  readonly putLinks: (repository: string, links: ReadonlyArray<Link>) => Promise<void>
  readonly getBlob: (digest: string) => BlobRecord | undefined
  /** records an access time; written in batches, not per request */
  readonly touch: (digest: string) => void
  readonly getRepository: (name: string) => unknown
  readonly putRepository: (name: string, config: unknown) => Promise<void>
  readonly repositories: () => ReadonlyArray<unknown>
  /**
   * drops a repository: its configuration, entries (releasing their blobs), negative entries and
   * links, in one transaction; returns how many entries were dropped
   */
  readonly removeRepository: (name: string) => Promise<number>
  /**
   * drops a repository's negative entries and the entries `drop` picks (by path; a hashed long
   * path is passed as undefined), releasing their blobs; returns how many entries were dropped
   */
  readonly invalidate: (name: string, drop: (path: string | undefined) => boolean) => Promise<number>
  readonly stats: IndexStats
  /** start-up repair: drops entries whose blob is missing and blob records without a file */
  readonly repair: (blobExists: (digest: string) => Promise<boolean>) => Promise<{ droppedEntries: number }>
  readonly hasBlobRecord: (digest: string) => boolean
  readonly flush: () => Promise<void>
}>()("larder/storage/Index") {
  static readonly make = (dataDir: string) =>
    Effect.gen(function*() {
      const root: RootDatabase = yield* Effect.acquireRelease(
        Effect.sync(() => open({ path: join(dataDir, "index.lmdb"), compression: false, maxDbs: 16 })),
        (db) => Effect.promise(() => db.close())
      )
      const entries: Database<CacheEntry, string> = root.openDB({ name: "entry" })
      const negatives: Database<NegativeEntry, string> = root.openDB({ name: "negative" })
      const blobs: Database<BlobRecord, string> = root.openDB({ name: "blob" })
      const repos: Database<unknown, string> = root.openDB({ name: "repo" })
      const links: Database<Omit<Link, "key">, string> = root.openDB({ name: "link" })

      // Decoded entries of recent hits: this process is the index's only writer, so every write
      // below drops the key and the cache cannot go stale. Saves an LMDB read and decode per hit.
      const entryCache = new Map<string, CacheEntry>()

      const stats: IndexStats = { blobs: 0, bytes: 0 }
      for (const { value } of blobs.getRange()) {
        stats.blobs++
        stats.bytes += value.size
      }

      const release = (digest: string, now: number) => {
        const record = blobs.get(digest)
        if (record === undefined) return
        blobs.put(digest, { ...record, refs: Math.max(0, record.refs - 1), lastAccess: now })
      }

      // Access times are advisory (eviction input), so they are gathered and written once a second.
      const pendingTouches = new Map<string, number>()
      const flushTouches = async () => {
        if (pendingTouches.size === 0) return
        const batch = [...pendingTouches]
        pendingTouches.clear()
        await root.transaction(() => {
          for (const [digest, at] of batch) {
            const record = blobs.get(digest)
            if (record !== undefined && record.lastAccess < at) blobs.put(digest, { ...record, lastAccess: at })
          }
        })
      }
      yield* Effect.acquireRelease(
        Effect.sync(() => setInterval(() => void flushTouches(), 1000).unref()),
        (timer) => Effect.promise(() => (clearInterval(timer), flushTouches()))
      )

      return Index.of({
        getEntry: (repository, path) => {
          const key = entryKey(repository, path)
          const cached = entryCache.get(key)
          if (cached !== undefined) return cached
          const entry = entries.get(key)
          if (entry !== undefined) {
            if (entryCache.size >= entryCacheSize) entryCache.delete(entryCache.keys().next().value!)
            entryCache.set(key, entry)
          }
          return entry
        },
        // The cache is cleared again once a write is visible: a read between the two could have
        // cached the old value.
        commitEntry: (repository, path, entry) =>
          root.transaction(() => {
            const key = entryKey(repository, path)
            const previous = entries.get(key)
            entries.put(key, entry)
            entryCache.delete(key)
            negatives.remove(key)
            if (previous?.digest === entry.digest) return
            const record = blobs.get(entry.digest)
            if (record === undefined) {
              stats.blobs++
              stats.bytes += entry.size
            }
            blobs.put(entry.digest, {
              size: entry.size,
              refs: (record?.refs ?? 0) + 1,
              lastAccess: entry.fetchedAt
            })
            if (previous !== undefined) release(previous.digest, entry.fetchedAt)
          }).then(() => void entryCache.delete(entryKey(repository, path))),
        removeEntry: (repository, path) =>
          root.transaction(() => {
            const key = entryKey(repository, path)
            const previous = entries.get(key)
            if (previous === undefined) return
            entries.remove(key)
            entryCache.delete(key)
            release(previous.digest, Date.now())
          }).then(() => void entryCache.delete(entryKey(repository, path))),
        getNegative: (repository, path) => negatives.get(entryKey(repository, path)),
        putNegative: (repository, path, entry) => negatives.put(entryKey(repository, path), entry).then(() => undefined),
        getLink: (repository, key) => {
          const stored = links.get(entryKey(repository, key))
          return stored === undefined ? undefined : { ...stored, key }
        },
        putLinks: (repository, list) =>
          root.transaction(() => {
            for (const { key, ...link } of list) links.put(entryKey(repository, key), link)
          }).then(() => undefined),
        getBlob: (digest) => blobs.get(digest),
        touch: (digest) => void pendingTouches.set(digest, Date.now()),
        getRepository: (name) => repos.get(name),
        putRepository: (name, config) => repos.put(name, config).then(() => undefined),
        repositories: () => [...repos.getRange()].map(({ value }) => value),
        invalidate: (name, drop) =>
          root.transaction(() => {
            const prefix = `${name}\0`
            const range = { start: prefix, end: `${name}\u0001` }
            const now = Date.now()
            let dropped = 0
            for (const { key, value } of entries.getRange(range)) {
              const path = key.slice(prefix.length)
              if (!drop(path.startsWith("\u0001") ? undefined : path)) continue
              entries.remove(key)
              entryCache.delete(key)
              release(value.digest, now)
              dropped++
            }
            for (const { key } of negatives.getRange(range)) negatives.remove(key)
            return dropped
          }),
        removeRepository: (name) =>
          root.transaction(() => {
            // every key of a repository starts with "<name>\0"; "\u0001" sorts right after it
            const range = { start: `${name}\0`, end: `${name}\u0001` }
            const now = Date.now()
            let dropped = 0
            for (const { key, value } of entries.getRange(range)) {
              entries.remove(key)
              entryCache.delete(key)
              release(value.digest, now)
              dropped++
            }
            for (const { key } of negatives.getRange(range)) negatives.remove(key)
            for (const { key } of links.getRange(range)) links.remove(key)
            repos.remove(name)
            return dropped
          }),
        stats,
        repair: async (blobExists) => {
          const digests = new Set<string>()
          for (const { key } of blobs.getRange()) digests.add(key)
          for (const { value } of entries.getRange()) digests.add(value.digest)
          const missing = new Set<string>()
          for (const digest of digests) if (!(await blobExists(digest))) missing.add(digest)
          let droppedEntries = 0
          await root.transaction(() => {
            for (const { key, value } of entries.getRange()) {
              if (!missing.has(value.digest)) continue
              entries.remove(key)
              entryCache.delete(key)
              droppedEntries++
            }
            for (const digest of missing) {
              const record = blobs.get(digest)
              if (record === undefined) continue
              blobs.remove(digest)
              stats.blobs--
              stats.bytes -= record.size
            }
          })
          return { droppedEntries }
        },
        hasBlobRecord: (digest) => blobs.doesExist(digest),
        flush: async () => {
          await flushTouches()
          await root.flushed
        }
      })
    })

  static readonly layer = (dataDir: string) => Layer.effect(Index, Index.make(dataDir))
}
