// The HTTP engine behind one module: node:http served through @effect/platform-node. A faster
// engine can replace this file without touching the handlers.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
// subpath imports: the package index loads every platform module (HTTP client, Redis, cluster ...)
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Schema } from "effect"
import type { ArtifactPath } from "./artifactPath.ts"

export class ListenError extends Schema.TaggedError<ListenError>()("ListenError", { message: Schema.String }) {}
import type { HttpServerRequest, HttpServerResponse } from "effect/http"

// Request headers beyond this get 431 from node before any handler runs.
const maxHeaderBytes = 16 * 1024

export const serveListener = <E, R>(options: {
  readonly host: string
  readonly port: number
  readonly app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  readonly artifactPath?: ArtifactPath
}) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const handler = yield* NodeHttpServer.makeHandler(options.app, { scope })
    const artifactPath = options.artifactPath
    const server = createServer(
      { maxHeaderSize: maxHeaderBytes, requestTimeout: 0, keepAliveTimeout: 65_000 },
      artifactPath === undefined ? handler : (request, response) => {
        if (!artifactPath(request, response)) handler(request, response)
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
