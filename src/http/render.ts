// Renders repository replies and errors as HTTP responses. Error bodies take the shape of the
// repository's format (plain text for raw; the container and package formats add theirs here).
import { createReadStream } from "node:fs"
import { HttpServerResponse } from "effect/http"
import type { RepositoryReply } from "../actors/RepositoryActor.ts"

export const errorResponse = (status: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(message.endsWith("\n") ? message : message + "\n", {
    status,
    headers,
    contentType: "text/plain; charset=utf-8"
  })

export const renderReply = (reply: RepositoryReply): HttpServerResponse.HttpServerResponse => {
  if (reply.kind === "error") {
    return errorResponse(reply.status, reply.message, reply.retryAfter === undefined ? {} : { "retry-after": reply.retryAfter })
  }
  if (reply.body === undefined) return HttpServerResponse.empty({ status: reply.status, headers: reply.headers })
  const { "content-type": contentType, ...headers } = reply.headers
  if (reply.body instanceof Uint8Array) {
    return HttpServerResponse.uint8Array(reply.body, { status: reply.status, headers, contentType })
  }
  const body = "file" in reply.body
    ? createReadStream(reply.body.file, { start: reply.body.start, end: reply.body.end, highWaterMark: 256 * 1024 })
    : reply.body
  return HttpServerResponse.raw(body, { status: reply.status, headers, contentType })
}
