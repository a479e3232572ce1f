// The request handler of each listener: source-range check (LAN), routing to repositories, metrics
// and status probes, and the request metrics around all of it.
import { Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Repositories } from "../actors/Repositories.ts"
import { Metrics } from "../admin/Metrics.ts"
import { makeRestApi } from "../admin/RepositoriesHandlers.ts"
import { parseArtifactUrl } from "../protocols/path.ts"
import { Index } from "../storage/Index.ts"
import { renderHome } from "../ui/home.ts"
import type { IncomingMessage } from "node:http"
import { basicChallenge } from "./basicAuth.ts"
import { publicOrigin, repositoryBase } from "./publicBase.ts"
import { errorResponse, renderReply } from "./render.ts"
import type { SourceRanges } from "./SourceRanges.ts"

export type ListenerName = "lan" | "web"

export interface AppOptions {
  readonly listener: ListenerName
  /** LAN listener only: sources outside these are refused before routing */
  readonly sourceRanges: SourceRanges | undefined
  readonly checkAdmin: (authorization: string | undefined) => boolean
  /** proxies whose X-Forwarded-Host/-Proto are believed */
  readonly trustedProxies: SourceRanges | undefined
}

const registryApiVersion = { "docker-distribution-api-version": "registry/2.0" }

const notFoundJson = (path: string) =>
  HttpServerResponse.jsonUnsafe({ status: 404, message: `no such endpoint: ${path}` }, { status: 404 })

export const makeApp = (options: AppOptions) =>
  Effect.gen(function*() {
    const repositories = yield* Repositories
    const metrics = yield* Metrics
    const index = yield* Index
    const { listener, sourceRanges, checkAdmin, trustedProxies } = options
    const parseOptions = { allowEncodedSlash: (name: string) => repositories.get(name)?.format === "npm" }
    const restApi = yield* makeRestApi(trustedProxies)

    const route = (request: HttpServerRequest.HttpServerRequest, path: string) =>
      Effect.gen(function*() {
        if (path === "/v2" || path === "/v2/") {
          // the registry API's base: clients probe it before every pull
          return HttpServerResponse.text("{}", { contentType: "application/json", headers: registryApiVersion })
        }
        if (path.startsWith("/repository/") || path.startsWith("/v2/")) {
          const parsed = parseArtifactUrl(request.url, parseOptions)
          if (!parsed.ok) return errorResponse(parsed.status, parsed.message)
          if (parsed.pathBased && repositories.get(parsed.repository)?.format !== "docker") {
            return errorResponse(404, `"${parsed.repository}" is not a container repository; /v2/<repository>/... serves container repositories`)
          }
          const reply = yield* repositories.handle(parsed.repository, {
            method: request.method,
            path: parsed.path,
            query: parsed.query,
            range: request.headers["range"],
            ifNoneMatch: request.headers["if-none-match"],
            accept: request.headers["accept"],
            base: repositoryBase(publicOrigin(request.headers, (request.source as IncomingMessage).socket, trustedProxies), parsed.repository)
          })
          return renderReply(reply)
        }
        if (path === "/service/rest/metrics/prometheus") {
          if (!checkAdmin(request.headers["authorization"])) {
            return errorResponse(401, "authentication required: use the admin credentials (HTTP basic auth)", basicChallenge)
          }
          const text = yield* Effect.promise(() => metrics.registry.metrics())
          return HttpServerResponse.text(text, { contentType: metrics.registry.contentType })
        }
        if (path === "/service/rest/v1/status" || path === "/service/rest/v1/status/writable") {
          return HttpServerResponse.empty({ status: 200 })
        }
        if (path.startsWith("/service/rest/v1/repositories") || path === "/service/rest/swagger.json") {
          if (!checkAdmin(request.headers["authorization"])) {
            return errorResponse(401, "authentication required: use the admin credentials (HTTP basic auth)", basicChallenge)
          }
          return yield* Effect.scoped(restApi).pipe(
            Effect.catch((failure) =>
              failure.reason._tag === "RouteNotFound"
                ? Effect.succeed(notFoundJson(path))
                : Effect.logError(`REST API ${request.method} ${path} failed: ${failure}`).pipe(
                  Effect.as(HttpServerResponse.jsonUnsafe({ status: 500, message: "internal error" }, { status: 500 }))
                ))
          )
        }
        if (path.startsWith("/service/rest/")) return notFoundJson(path)
        if (path === "/" && listener === "web") {
          const page = yield* Effect.promise(() => renderHome(repositories.list(), metrics, index.stats, index.quotaBytes))
          return HttpServerResponse.html(page)
        }
        if (path === "/") {
          return HttpServerResponse.text(
            `larder: ${repositories.list().length} repositories under /repository/<name>/\n`,
            { contentType: "text/plain; charset=utf-8" }
          )
        }
        return errorResponse(404, `not found: ${path}`)
      })

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const started = performance.now()
      const queryAt = request.url.indexOf("?")
      const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt)
      let response: HttpServerResponse.HttpServerResponse
      if (sourceRanges !== undefined && !sourceRanges.allows(Option.getOrUndefined(request.remoteAddress))) {
        metrics.sourceRejected.inc({ listener })
        response = errorResponse(403, `source address ${Option.getOrElse(request.remoteAddress, () => "unknown")} is outside this listener's source ranges`)
      } else {
        response = yield* route(request, path)
      }
      // only configured names become label values, so arbitrary URLs cannot grow the metric set
      const named = path.startsWith("/repository/") ? path.slice(12).split("/", 1)[0] : path.startsWith("/v2/") ? path.slice(4).split("/", 1)[0] : ""
      const repository = named === "" || repositories.get(named) !== undefined ? named : "(unknown)"
      metrics.httpRequests.inc({ listener, repository, method: request.method, status: String(response.status) })
      metrics.httpDuration.observe({ listener }, (performance.now() - started) / 1000)
      return response
    })
  })
