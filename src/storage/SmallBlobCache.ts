// Bytes of small blobs kept in memory, so a small hit is served without touching the filesystem.
// Blobs are immutable and addressed by digest, so an entry can never go stale.

export interface SmallBlobCache {
  readonly get: (digest: string) => Buffer | undefined
  readonly set: (digest: string, bytes: Buffer) => void
  readonly delete: (digest: string) => void
}

export const makeSmallBlobCache = (budgetBytes: number, maxBlobBytes: number): SmallBlobCache => {
  // Map iteration order is insertion order: re-inserting on use makes the first key the least recent.
  const entries = new Map<string, Buffer>()
  let used = 0
  return {
    get: (digest) => {
      const bytes = entries.get(digest)
      if (bytes !== undefined) {
        entries.delete(digest)
        entries.set(digest, bytes)
      }
      return bytes
    },
    set: (digest, bytes) => {
      if (bytes.length > maxBlobBytes || entries.has(digest)) return
      entries.set(digest, bytes)
      used += bytes.length
      for (const [oldest, old] of entries) {
        if (used <= budgetBytes) break
        entries.delete(oldest)
        used -= old.length
      }
    },
    delete: (digest) => {
      const bytes = entries.get(digest)
      if (bytes === undefined) return
      entries.delete(digest)
      used -= bytes.length
    }
  }
}
