// A local upstream the tests and benchmarks start: serves files they register and counts every
// request, so a test can say exactly how often larder went upstream.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface UpstreamRoute {
  readonly status?: number
  readonly body?: Buffer | string
  readonly headers?: Record<string, string>
  /** send this many body bytes, then wait for `until` before sending the rest */
  readonly pauseAfter?: { readonly bytes: number; readonly until: Promise<void> }
  /** send the full Content-Length header, then close the connection after this many bytes */
  readonly truncateAfter?: number
  /** content negotiation: the route to answer with for this Accept header */
  readonly negotiate?: (accept: string | undefined) => UpstreamRoute
}

export interface Upstream {
  readonly url: string
  readonly port: number
  readonly routes: Map<string, UpstreamRoute>
  readonly requests: Array<{ readonly method: string; readonly path: string; readonly headers: IncomingMessage["headers"] }>
  readonly count: (path: string) => number
  /** the most requests this upstream had open at once */
  readonly maxConcurrent: () => number
  readonly close: () => Promise<void>
}

const respond = (route: UpstreamRoute, req: IncomingMessage, res: ServerResponse): void => {
  const etag = route.headers?.etag
  if (etag !== undefined && req.headers["if-none-match"] === etag && (route.status ?? 200) === 200) {
    res.writeHead(304, { etag })
    return void res.end()
  }
  const lastModified = route.headers?.["last-modified"]
  if (
    lastModified !== undefined && etag === undefined && req.headers["if-modified-since"] !== undefined &&
    Date.parse(req.headers["if-modified-since"]) >= Date.parse(lastModified) && (route.status ?? 200) === 200
  ) {
    res.writeHead(304, { "last-modified": lastModified })
    return void res.end()
  }
  const body = typeof route.body === "string" ? Buffer.from(route.body) : route.body ?? Buffer.alloc(0)
  res.writeHead(route.status ?? 200, {
    "content-type": "application/octet-stream",
    "content-length": String(body.length),
    ...route.headers
  })
  if (req.method === "HEAD") return void res.end()
  if (route.truncateAfter !== undefined) {
    res.write(body.subarray(0, route.truncateAfter), () => res.socket?.destroy())
    return
  }
  if (route.pauseAfter !== undefined) {
    const { bytes, until } = route.pauseAfter
    res.write(body.subarray(0, bytes))
    void until.then(() => res.end(body.subarray(bytes)))
    return
  }
  res.end(body)
}

export const startUpstream = async (host = "127.0.0.1"): Promise<Upstream> => {
  const routes = new Map<string, UpstreamRoute>()
  const requests: Upstream["requests"] = []
  let open = 0
  let maxOpen = 0
  const server = createServer((req, res) => {
    open++
    maxOpen = Math.max(maxOpen, open)
    res.once("close", () => open--)
    // routes are registered by decoded path (npm's scoped names arrive as @scope%2fname)
    const rawPath = (req.url ?? "/").split("?")[0]
    let path = rawPath
    try {
      path = decodeURIComponent(rawPath)
    } catch {
      // keep it raw; no route will match
    }
    requests.push({ method: req.method ?? "GET", path, headers: req.headers })
    const registered = routes.get(path)
    const route = registered?.negotiate?.(req.headers.accept) ?? registered
    if (route === undefined) {
      res.writeHead(404, { "content-type": "text/plain" })
      return void res.end("not found\n")
    }
    respond(route, req, res)
  })
  server.keepAliveTimeout = 1000
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://${host}:${port}`,
    port,
    routes,
    requests,
    count: (path) => requests.filter((r) => r.path === path).length,
    maxConcurrent: () => maxOpen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
