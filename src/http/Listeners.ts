// The HTTP engine behind one module: node:http served through @effect/platform-node. A faster
// engine can replace this file without touching the handlers.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
// subpath imports: the package index loads every platform module (HTTP client, Redis, cluster ...)
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Schema } from "effect"

/** answers a request on node's request/response and returns true, or returns false to pass it on */
export type NodeHandler = (request: IncomingMessage, response: ServerResponse) => boolean

export class ListenError extends Schema.TaggedError<ListenError>()("ListenError", { message: Schema.String }) {}
import type { HttpServerRequest, HttpServerResponse } from "effect/http"

// Request headers beyond this get 431 from node before any handler runs.
const maxHeaderBytes = 16 * 1024

export const serveListener = <E, R>(options: {
  readonly host: string
  readonly port: number
  readonly app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  /** tried in order before the Effect handler (the artifact path, the gate, the IdP) */
  readonly nodeHandlers?: ReadonlyArray<NodeHandler>
}) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const handler = yield* NodeHttpServer.makeHandler(options.app, { scope })
    const nodeHandlers = options.nodeHandlers ?? []
    const server = createServer(
      { maxHeaderSize: maxHeaderBytes, requestTimeout: 0, keepAliveTimeout: 65_000 },
      nodeHandlers.length === 0 ? handler : (request, response) => {
        for (const nodeHandler of nodeHandlers) if (nodeHandler(request, response)) return
        handler(request, response)
      }
    )
    yield* Effect.acquireRelease(
      Effect.callback<void, ListenError>((resume) => {
        server.once("error", (error) => resume(Effect.fail(new ListenError({ message: `cannot listen on ${options.host}:${options.port}: ${error.message}` }))))
        server.listen(options.port, options.host, () => resume(Effect.void))
      }),
      () =>
        Effect.callback<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
    const address = server.address() as AddressInfo
    const wildcard = address.address === "::" || address.address === "0.0.0.0"
    const host = wildcard ? "127.0.0.1" : address.family === "IPv6" ? `[${address.address}]` : address.address
    return `http://${host}:${address.port}`
  })

export type { HttpServerRequest }
