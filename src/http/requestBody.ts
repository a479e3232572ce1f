// A request body read whole, up to a limit: beyond it the request is destroyed and the promise
// fails with `tooLarge()` (so a client cannot make larder buffer without bound).
import type { IncomingMessage } from "node:http"

export const readBodyUpTo = (request: IncomingMessage, maxBytes: number, tooLarge: () => Error): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        reject(tooLarge())
        request.destroy()
        return
      }
      chunks.push(chunk)
    })
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })
