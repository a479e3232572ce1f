// The engine's artifact path: GET and HEAD under /repository/ from admitted sources are answered
// straight on node's request/response. A fresh hit that needs no I/O is answered synchronously;
// other requests go to the repository actor and its reply is streamed with reused buffers. Every
// other request, and every refusal (source range, bad path), goes to the Effect handler.
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect } from "effect"
import type { Repositories } from "../actors/Repositories.ts"
import type { RepositoryRequest } from "../actors/RepositoryActor.ts"
import { counterChildren, type Metrics } from "../admin/Metrics.ts"
import { parseArtifactUrl } from "../protocols/path.ts"
import { writeReply } from "./render.ts"
import { publicOrigin, repositoryBase } from "./publicBase.ts"
import type { NodeHandler } from "./Listeners.ts"
import type { SourceRanges } from "./SourceRanges.ts"


export const makeArtifactPath = (options: {
  readonly listener: string
  readonly sourceRanges: SourceRanges | undefined
  readonly repositories: Repositories["Service"]
  readonly metrics: Metrics["Service"]
  /** proxies whose X-Forwarded-Host/-Proto are believed */
  readonly trustedProxies: SourceRanges | undefined
}): NodeHandler => {
  const { listener, sourceRanges, repositories, metrics, trustedProxies } = options
  const parseOptions = { allowEncodedSlash: (name: string) => repositories.get(name)?.format === "npm" }
  const duration = metrics.httpDuration.labels(listener)
  const requestCounter = counterChildren(metrics.httpRequests)
  return (request, response) => {
    const started = performance.now()
    const method = request.method
    const url = request.url
    if ((method !== "GET" && method !== "HEAD") || url === undefined) return false
    if (!url.startsWith("/repository/") && !url.startsWith("/v2/")) return false
    if (sourceRanges !== undefined && !sourceRanges.allows(request.socket.remoteAddress)) return false
    const parsed = parseArtifactUrl(url, parseOptions)
    if (!parsed.ok) return false
    const config = repositories.get(parsed.repository)
    if (config === undefined || (parsed.pathBased && config.format !== "docker")) return false
    const repositoryRequest: RepositoryRequest = {
      method,
      path: parsed.path,
      query: parsed.query,
      range: request.headers.range,
      ifNoneMatch: request.headers["if-none-match"],
      accept: request.headers.accept,
      base: config.format === "docker"
        ? undefined
        : repositoryBase(publicOrigin(request.headers, request.socket, trustedProxies), parsed.repository)
    }
    const onHead = (status: number) => {
      requestCounter(listener, parsed.repository, method, String(status)).inc()
      duration.observe((performance.now() - started) / 1000)
    }
    const headOnly = method === "HEAD"
    const hit = repositories.tryHit(parsed.repository, repositoryRequest)
    const done = hit !== undefined
      ? writeReply(response, hit, headOnly, onHead)
      : Effect.runPromise(repositories.handle(parsed.repository, repositoryRequest)).then((reply) =>
        writeReply(response, reply, headOnly, onHead)
      )
    done.catch((error: Error) => {
      if (!response.headersSent) {
        response.writeHead(500, { "content-type": "text/plain; charset=utf-8" })
        response.end(`internal error: ${error.message}\n`)
      } else {
        response.destroy(error)
      }
    })
    return true
  }
}
