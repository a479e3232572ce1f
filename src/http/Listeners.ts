// The HTTP engine behind one module: node:http served through @effect/platform-node. A faster
// engine can replace this file without touching the handlers.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"

// Request headers beyond this get 431 from node before any handler runs.
const maxHeaderBytes = 16 * 1024

export const serveListener = <E, R>(options: {
  readonly host: string
  readonly port: number
  readonly app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
}) =>
  Effect.gen(function*() {
    const server = createServer({ maxHeaderSize: maxHeaderBytes, requestTimeout: 0, keepAliveTimeout: 65_000 })
    const http = yield* NodeHttpServer.make(() => server, { port: options.port, host: options.host })
    yield* http.serve(options.app)
    const address = server.address() as AddressInfo
    const wildcard = address.address === "::" || address.address === "0.0.0.0"
    const host = wildcard ? "127.0.0.1" : address.family === "IPv6" ? `[${address.address}]` : address.address
    return `http://${host}:${address.port}`
  })

export type { HttpServerRequest }
