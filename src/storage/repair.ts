// Start-up repair after a crash: temp files of unfinished writes are removed, index entries whose
// blob file is missing are dropped, and blob files no entry references (renamed just before a
// crash, before their index commit) are removed.
import { Effect } from "effect"
import { BlobStore } from "./BlobStore.ts"
import { Index } from "./Index.ts"

export const repairStore = Effect.gen(function*() {
  const blobs = yield* BlobStore
  const index = yield* Index
  return yield* Effect.promise(async () => {
    const tempFiles = await blobs.clearTemp()
    const { droppedEntries } = await index.repair(blobs.exists)
    let orphanBlobs = 0
    for (const digest of await blobs.list()) {
      if (index.hasBlobRecord(digest)) continue
      await blobs.remove(digest)
      orphanBlobs++
    }
    return { tempFiles, droppedEntries, orphanBlobs }
  })
})
