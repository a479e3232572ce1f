// The LMDB index: what each repository path maps to, which blobs exist and who references them,
// negative (404) entries and repository configurations. One environment, named databases.
import { createHash } from "node:crypto"
import { join } from "node:path"
import { open, type Database, type RootDatabase } from "lmdb"
import { Context, Effect, Layer } from "effect"
import type { Link } from "../protocols/route.ts"
import { makePolicy, type PolicyName } from "./eviction/policies.ts"

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

// lmdb's key encoding reads a string holding "\0" back as an array of its parts
const keyText = (key: unknown): string => (Array.isArray(key) ? key.join("\0") : String(key))

export interface IndexStats {
  blobs: number
  bytes: number
  /** blobs evicted to keep the quota, and their bytes, since start */
  evictions: number
  evictedBytes: number
}

export interface IndexOptions {
  /** bytes the blob store may hold; undefined: no limit */
  readonly quotaBytes?: number | undefined
  readonly policy?: PolicyName | undefined
  /** deletes an evicted blob's file, after the index no longer names it */
  readonly removeBlob?: ((digest: string) => Promise<void>) | undefined
}

export const defaultEvictionPolicy: PolicyName = "s3-fifo"
const pinLeaseMs = 10 * 60_000

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
  /** a blob being served is never evicted: pinned from the lookup until its file is open and read */
  readonly pin: (digest: string) => void
  readonly unpin: (digest: string) => void
  readonly quotaBytes: number | undefined
  readonly flush: () => Promise<void>
  /** a named database of the same environment, for features that keep state (gate sessions, IdP) */
  readonly database: <V>(name: string) => Database<V, string>
}>()("larder/storage/Index") {
  static readonly make = (dataDir: string, options: IndexOptions = {}) =>
    Effect.gen(function*() {
      const root: RootDatabase = yield* Effect.acquireRelease(
        Effect.sync(() => open({ path: join(dataDir, "index.lmdb"), compression: false, maxDbs: 32 })),
        (db) => Effect.promise(() => db.close())
      )
      const entries: Database<CacheEntry, string> = root.openDB({ name: "entry" })
      const negatives: Database<NegativeEntry, string> = root.openDB({ name: "negative" })
      const blobs: Database<BlobRecord, string> = root.openDB({ name: "blob" })
      const repos: Database<unknown, string> = root.openDB({ name: "repo" })
      const links: Database<Omit<Link, "key">, string> = root.openDB({ name: "link" })
      // reverse references "<digest>\0<entry key>": which entries go when a blob is evicted
      const refs: Database<1, string> = root.openDB({ name: "ref" })
      const refKey = (digest: string, key: string) => `${digest}\0${key}`
      const refRange = (digest: string) => ({ start: `${digest}\0`, end: `${digest}\u0001` })
      if (refs.getKeysCount() === 0 && entries.getKeysCount() > 0) {
        // an index written before reverse references existed
        yield* Effect.promise(() =>
          root.transaction(() => {
            for (const { key, value } of entries.getRange()) refs.put(refKey(value.digest, keyText(key)), 1)
          })
        )
      }

      // Decoded entries of recent hits: this process is the index's only writer, so every write
      // below drops the key and the cache cannot go stale. Saves an LMDB read and decode per hit.
      const entryCache = new Map<string, CacheEntry>()

      const stats: IndexStats = { blobs: 0, bytes: 0, evictions: 0, evictedBytes: 0 }
      const quota = options.quotaBytes
      const policy = makePolicy(options.policy ?? defaultEvictionPolicy, quota ?? Number.MAX_SAFE_INTEGER)
      const known: Array<[string, BlobRecord]> = []
      for (const { key, value } of blobs.getRange()) {
        stats.blobs++
        stats.bytes += value.size
        known.push([key, value])
      }
      // the policy's memory is rebuilt from access times: least recent first
      for (const [digest, record] of known.sort((a, b) => a[1].lastAccess - b[1].lastAccess)) policy.insert(digest, record.size)
      known.length = 0

      // digest -> readers and when the last one pinned it. A pin only has to cover the gap between
      // the lookup and opening the file (an open file survives its unlink), so one older than
      // pinLeaseMs no longer counts: a reply that is never consumed cannot pin a blob forever.
      const pins = new Map<string, { count: number; at: number }>()
      const pinned = (digest: string) => {
        const pin = pins.get(digest)
        return pin !== undefined && Date.now() - pin.at < pinLeaseMs
      }
      /**
       * Inside a write transaction: evicts blobs (and every entry naming them) until `incoming`
       * more bytes fit the quota. Returns the evicted digests, whose files go after the commit.
       */
      const makeRoom = (incoming: number, keep: string): Array<string> => {
        const evicted: Array<string> = []
        if (quota === undefined) return evicted
        while (stats.bytes + incoming > quota) {
          const victim = policy.victim((digest) => digest === keep || pinned(digest))
          if (victim === undefined) break
          const record = blobs.get(victim)
          for (const { key } of refs.getRange(refRange(victim))) {
            const entryKeyOfRef = keyText(key).slice(victim.length + 1)
            if (entries.get(entryKeyOfRef)?.digest === victim) {
              entries.remove(entryKeyOfRef)
              entryCache.delete(entryKeyOfRef)
            }
            refs.remove(keyText(key))
          }
          if (record !== undefined) {
            blobs.remove(victim)
            stats.blobs--
            stats.bytes -= record.size
            stats.evictions++
            stats.evictedBytes += record.size
          }
          evicted.push(victim)
        }
        return evicted
      }
      const removeFiles = async (digests: ReadonlyArray<string>) => {
        for (const digest of digests) await options.removeBlob?.(digest).catch(() => undefined)
      }

      const release = (digest: string, now: number) => {
        const record = blobs.get(digest)
        if (record === undefined) return
        blobs.put(digest, { ...record, refs: Math.max(0, record.refs - 1), lastAccess: now })
      }

      /** removes an entry read from a range (whose key may come back as an array) with its reference */
      const dropEntry = (key: unknown, digest: string, now: number) => {
        const text = keyText(key)
        entries.remove(text)
        entryCache.delete(text)
        refs.remove(refKey(digest, text))
        release(digest, now)
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
          root.transaction((): Array<string> => {
            const key = entryKey(repository, path)
            const previous = entries.get(key)
            if (previous?.digest === entry.digest) {
              entries.put(key, entry)
              entryCache.delete(key)
              negatives.remove(key)
              return []
            }
            const record = blobs.get(entry.digest)
            // room is made before the new blob counts, so the quota holds at every commit
            const evicted = record === undefined ? makeRoom(entry.size, entry.digest) : []
            entries.put(key, entry)
            entryCache.delete(key)
            negatives.remove(key)
            refs.put(refKey(entry.digest, key), 1)
            if (record === undefined) {
              stats.blobs++
              stats.bytes += entry.size
              policy.insert(entry.digest, entry.size)
            } else policy.access(entry.digest)
            blobs.put(entry.digest, {
              size: entry.size,
              refs: (record?.refs ?? 0) + 1,
              lastAccess: entry.fetchedAt
            })
            if (previous !== undefined && blobs.doesExist(previous.digest)) {
              refs.remove(refKey(previous.digest, key))
              release(previous.digest, entry.fetchedAt)
            }
            return evicted
          }).then(async (evicted) => {
            entryCache.delete(entryKey(repository, path))
            await removeFiles(evicted)
          }),
        removeEntry: (repository, path) =>
          root.transaction(() => {
            const key = entryKey(repository, path)
            const previous = entries.get(key)
            if (previous === undefined) return
            entries.remove(key)
            entryCache.delete(key)
            refs.remove(refKey(previous.digest, key))
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
        touch: (digest) => {
          pendingTouches.set(digest, Date.now())
          policy.access(digest)
        },
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
              const path = keyText(key).slice(prefix.length)
              if (!drop(path.startsWith("\u0001") ? undefined : path)) continue
              dropEntry(key, value.digest, now)
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
              dropEntry(key, value.digest, now)
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
              const text = keyText(key)
              entries.remove(text)
              entryCache.delete(text)
              refs.remove(refKey(value.digest, text))
              droppedEntries++
            }
            for (const digest of missing) {
              const record = blobs.get(digest)
              if (record === undefined) continue
              blobs.remove(digest)
              policy.remove(digest)
              stats.blobs--
              stats.bytes -= record.size
            }
          })
          return { droppedEntries }
        },
        hasBlobRecord: (digest) => blobs.doesExist(digest),
        pin: (digest) => void pins.set(digest, { count: (pins.get(digest)?.count ?? 0) + 1, at: Date.now() }),
        unpin: (digest) => {
          const pin = pins.get(digest)
          if (pin === undefined || pin.count <= 1) pins.delete(digest)
          else pin.count--
        },
        quotaBytes: quota,
        database: <V>(name: string): Database<V, string> => root.openDB({ name: `feature/${name}` }),
        flush: async () => {
          await flushTouches()
          await root.flushed
        }
      })
    })

  static readonly layer = (dataDir: string, options: IndexOptions = {}) => Layer.effect(Index, Index.make(dataDir, options))
}
