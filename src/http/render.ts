// Repository replies on the wire. The engine's artifact path writes them straight to node's
// response; the Effect handler renders them as HttpServerResponse. Error bodies take the shape of
// the repository's format (plain text for raw; the container and package formats add theirs here).
import { createReadStream } from "node:fs"
import type { ServerResponse } from "node:http"
import { HttpServerResponse } from "effect/http"
import { followerStream } from "../actors/FetchActor.ts"
import type { RepositoryReply } from "../actors/RepositoryActor.ts"
import { sendFile, sendFollower } from "./sendFile.ts"

const textHeaders = { "content-type": "text/plain; charset=utf-8" }

const errorText = (message: string) => (message.endsWith("\n") ? message : message + "\n")

export const errorResponse = (status: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(errorText(message), { status, headers, contentType: textHeaders["content-type"] })

type ErrorReply = Extract<RepositoryReply, { kind: "error" }>

/** The error body in the repository format's shape: registry JSON, or plain text. */
export const errorWire = (reply: ErrorReply): { readonly headers: Record<string, string>; readonly body: string } => {
  const headers: Record<string, string> = {}
  if (reply.retryAfter !== undefined) headers["retry-after"] = reply.retryAfter
  if (reply.style === "registry") {
    headers["content-type"] = "application/json"
    headers["docker-distribution-api-version"] = "registry/2.0"
    const code = reply.code ?? (reply.status === 404 ? "NAME_UNKNOWN" : "UNSUPPORTED")
    return { headers, body: JSON.stringify({ errors: [{ code, message: reply.message, detail: null }] }) + "\n" }
  }
  if (reply.style === "json") {
    // npm's error shape: the client prints `error`
    headers["content-type"] = "application/json"
    return { headers, body: JSON.stringify({ error: reply.message }) + "\n" }
  }
  headers["content-type"] = textHeaders["content-type"]
  return { headers, body: errorText(reply.message) }
}

export const renderReply = (reply: RepositoryReply): HttpServerResponse.HttpServerResponse => {
  if (reply.kind === "error") {
    const { headers, body } = errorWire(reply)
    const { "content-type": contentType, ...rest } = headers
    return HttpServerResponse.text(body, { status: reply.status, headers: rest, contentType })
  }
  if (reply.body === undefined) return HttpServerResponse.empty({ status: reply.status, headers: reply.headers })
  const { "content-type": contentType, ...headers } = reply.headers
  if (reply.body instanceof Uint8Array) {
    return HttpServerResponse.uint8Array(reply.body, { status: reply.status, headers, contentType })
  }
  const slice = reply.body
  const body = "file" in slice
    ? createReadStream(slice.file, { start: slice.start, end: slice.end, highWaterMark: 256 * 1024 }).on("close", () => slice.release?.())
    : followerStream(slice.follow, slice.blobPath, slice.end === undefined ? undefined : { start: slice.start, end: slice.end })
  return HttpServerResponse.raw(body, { status: reply.status, headers, contentType })
}

/**
 * Writes a reply on node's response. `onHead` runs when the status line is decided (for metrics).
 * Resolves when the body is sent or the response has ended in an error.
 */
export const writeReply = async (
  response: ServerResponse,
  reply: RepositoryReply,
  headOnly: boolean,
  onHead: (status: number) => void
): Promise<void> => {
  if (reply.kind === "error") {
    const { headers, body } = errorWire(reply)
    headers["content-length"] = String(Buffer.byteLength(body))
    onHead(reply.status)
    response.writeHead(reply.status, headers)
    response.end(headOnly ? undefined : body)
    return
  }
  const body = reply.body
  if (body === undefined || headOnly || body instanceof Uint8Array) {
    if (body !== undefined && !(body instanceof Uint8Array) && "file" in body) body.release?.()
    onHead(reply.status)
    response.writeHead(reply.status, reply.headers)
    response.end(headOnly ? undefined : body)
    return
  }
  if ("file" in body) {
    try {
      await sendFile(body.file, body.start, body.end, response, () => {
        onHead(reply.status)
        response.writeHead(reply.status, reply.headers)
      })
    } catch (error) {
      // the index names a blob whose file cannot be opened: nothing was written yet
      await writeReply(response, { kind: "error", status: 500, message: `cached blob cannot be read: ${(error as Error).message}` }, headOnly, onHead)
    } finally {
      body.release?.()
    }
    return
  }
  onHead(reply.status)
  response.writeHead(reply.status, reply.headers)
  await sendFollower(body.follow, body.blobPath, body.start, body.end, response)
}
