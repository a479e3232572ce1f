// The engine's fast path: a fresh cache hit that needs no I/O (small blob in memory, HEAD,
// conditional) is answered straight on node's request/response, without a fiber per request.
// Everything else, including every refusal, goes to the Effect handler.
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Repositories } from "../actors/Repositories.ts"
import type { Metrics } from "../admin/Metrics.ts"
import { parseRepositoryUrl } from "../protocols/path.ts"
import { sendFile } from "./sendFile.ts"
import type { SourceRanges } from "./SourceRanges.ts"

export type FastPath = (request: IncomingMessage, response: ServerResponse) => boolean

export const makeFastPath = (options: {
  readonly listener: string
  readonly sourceRanges: SourceRanges | undefined
  readonly repositories: Repositories["Service"]
  readonly metrics: Metrics["Service"]
}): FastPath => {
  const { listener, sourceRanges, repositories, metrics } = options
  const duration = metrics.httpDuration.labels(listener)
  return (request, response) => {
    const started = performance.now()
    const method = request.method
    const url = request.url
    if ((method !== "GET" && method !== "HEAD") || url === undefined || !url.startsWith("/repository/")) return false
    if (sourceRanges !== undefined && !sourceRanges.allows(request.socket.remoteAddress)) return false
    const parsed = parseRepositoryUrl(url)
    if (!parsed.ok) return false
    const reply = repositories.tryHit(parsed.repository, {
      method,
      path: parsed.path,
      query: parsed.query,
      range: request.headers.range,
      ifNoneMatch: request.headers["if-none-match"]
    })
    if (reply === undefined || reply.kind !== "content") return false
    const done = () => {
      metrics.httpRequests.labels(listener, parsed.repository, method, String(reply.status)).inc()
      duration.observe((performance.now() - started) / 1000)
    }
    const body = reply.body
    if (body === undefined || method === "HEAD" || body instanceof Uint8Array) {
      response.writeHead(reply.status, reply.headers)
      response.end(method === "HEAD" ? undefined : body)
      done()
      return true
    }
    if (!("file" in body)) return false
    sendFile(body.file, body.start, body.end, response, () => {
      response.writeHead(reply.status, reply.headers)
      done()
    }).catch((error: Error) => {
      // the index names a blob whose file cannot be opened: nothing was written yet
      response.writeHead(500, { "content-type": "text/plain; charset=utf-8" })
      response.end(`cached blob cannot be read: ${error.message}\n`)
    })
    return true
  }
}
