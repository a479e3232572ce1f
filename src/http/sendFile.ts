// Streams a byte range of a file to an HTTP response with two reusable buffers per response: one
// is being read from disk while the other is being written to the socket. Memory per client stays
// at two chunks however large the file, and no garbage is made per chunk.
import { promises as fs } from "node:fs"
import type { ServerResponse } from "node:http"

const chunkBytes = 256 * 1024

const written = (response: ServerResponse, chunk: Buffer) =>
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
      pendingWrite = written(response, buffer.subarray(0, bytesRead))
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
