// Streams a byte range of a file to an HTTP response with two reusable buffers per response: one
// is being read from disk while the other is being written to the socket. Memory per client stays
// at two chunks however large the file, and no garbage is made per chunk.
import { promises as fs } from "node:fs"
import type { FileHandle } from "node:fs/promises"
import type { ServerResponse } from "node:http"
import { openFollowed, type Fetch, type FetchOutcome } from "../actors/FetchActor.ts"

const chunkBytes = 256 * 1024

/** resolves true once the chunk is handed to the socket, false if the response closed first */
/** resolves true once the chunk is handed to the socket, false if the response closed first */
const handedToSocket = (response: ServerResponse, chunk: Buffer) =>
  new Promise<boolean>((resolve) => {
    if (response.destroyed) return resolve(false)
    const onClose = () => resolve(false)
    response.once("close", onClose)
    response.write(chunk, (error) => {
      response.off("close", onClose)
      resolve(error === undefined || error === null)
    })
  })

/**
 * Opens the file, then writes the headers (`writeHead`), then bytes start..end (inclusive).
 * Rejects, with nothing written, when the file cannot be opened. Resolves with the bytes sent; on a
 * read error or short file the response is destroyed (the client sees an incomplete body, never a
 * clean short one).
 */
export const sendFile = async (
  path: string,
  start: number,
  end: number,
  response: ServerResponse,
  writeHead: () => void
): Promise<number> => {
  const handle = await fs.open(path, "r")
  writeHead()
  const buffers = [Buffer.allocUnsafe(chunkBytes), Buffer.allocUnsafe(chunkBytes)]
  let position = start
  let sent = 0
  let turn = 0
  try {
    let pendingWrite: Promise<boolean> = Promise.resolve(true)
    while (position <= end) {
      const buffer = buffers[turn]
      turn ^= 1
      const length = Math.min(chunkBytes, end - position + 1)
      const [{ bytesRead }, ok] = await Promise.all([handle.read(buffer, 0, length, position), pendingWrite])
      if (!ok) return sent
      if (bytesRead === 0) throw new Error(`${path} ended at byte ${position}, expected ${end + 1}`)
      position += bytesRead
      sent += bytesRead
      // the buffer read above is not reused until the write of it has completed (two turns later)
      pendingWrite = handedToSocket(response, buffer.subarray(0, bytesRead))
    }
    if (await pendingWrite) response.end()
    return sent
  } catch (error) {
    response.destroy(error instanceof Error ? error : new Error(String(error)))
    return sent
  } finally {
    await handle.close()
  }
}

/**
 * Streams a fetch in flight (bytes start..end, end inclusive or to the end) from its growing temp
 * file, after the headers the caller wrote. The last byte waits until the fetch has committed; a
 * failed fetch destroys the response, so the client sees an error, never a clean short body.
 */
export const sendFollower = async (
  fetch: Fetch,
  blobPath: (digest: string) => string,
  start: number,
  end: number | undefined,
  response: ServerResponse
): Promise<number> => {
  let settled: FetchOutcome | undefined
  void fetch.done.then((outcome) => (settled = outcome))
  const stop = end === undefined ? Number.POSITIVE_INFINITY : end + 1
  const buffers = [Buffer.allocUnsafe(chunkBytes), Buffer.allocUnsafe(chunkBytes)]
  let handle: FileHandle | undefined
  let position = start
  let turn = 0
  let pendingWrite: Promise<boolean> = Promise.resolve(true)
  try {
    handle = await openFollowed(fetch, blobPath)
    for (;;) {
      // The last byte is held back until the fetch is verified and committed: a client that has
      // every declared byte takes the body as complete, so it must not get them early.
      const written = settled?.ok ? fetch.written() : Math.max(0, fetch.written() - 1)
      const available = Math.min(written, stop)
      if (position < available) {
        const buffer = buffers[turn]
        turn ^= 1
        const length = Math.min(chunkBytes, available - position)
        const [{ bytesRead }, ok] = await Promise.all([handle.read(buffer, 0, length, position), pendingWrite])
        if (!ok) return position - start
        if (bytesRead === 0) throw new Error("blob file shorter than the bytes written to it")
        position += bytesRead
        pendingWrite = handedToSocket(response, buffer.subarray(0, bytesRead))
        continue
      }
      if (position >= stop) break
      if (settled !== undefined) {
        if (!settled.ok) throw new Error(settled.message)
        if (position >= settled.size) break
        continue
      }
      if (!(await pendingWrite)) return position - start
      pendingWrite = Promise.resolve(true)
      if (response.destroyed) return position - start
      await Promise.race([fetch.progress(), fetch.done])
    }
    if (await pendingWrite) response.end()
  } catch (error) {
    response.destroy(error instanceof Error ? error : new Error(String(error)))
  } finally {
    await handle?.close()
  }
  return position - start
}
