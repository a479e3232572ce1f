// The repository REST API's handlers: read and change repository configurations through the
// Repositories service, which stores them in the index and applies them to new requests at once.
import type { IncomingMessage } from "node:http"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer, type HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Repositories } from "../actors/Repositories.ts"
import { publicOrigin } from "../http/publicBase.ts"
import type { SourceRanges } from "../http/SourceRanges.ts"
import { LarderApi } from "./RepositoriesApi.ts"
import { fromNexus, toNexus, toSummary } from "./repositoryWire.ts"

const notFound = (name: string) => ({ status: 404 as const, message: `repository "${name}" does not exist` })

export const repositoriesHandlers = (trustedProxies: SourceRanges | undefined) =>
  HttpApiBuilder.group(LarderApi, "repositories", (handlers) =>
    Effect.gen(function*() {
      const repositories = yield* Repositories
      const originOf = (request: HttpServerRequest.HttpServerRequest) =>
        publicOrigin(request.headers, (request.source as IncomingMessage).socket, trustedProxies)
      return handlers
        .handle("list", ({ request }) => Effect.sync(() => repositories.list().map((repository) => toSummary(repository, originOf(request)))))
        .handle("get", ({ params, request }) =>
          Effect.gen(function*() {
            const repository = repositories.get(params.name)
            if (repository === undefined) return yield* Effect.fail(notFound(params.name))
            return toNexus(repository, originOf(request))
          }))
        .handle("getByFormat", ({ params, request }) =>
          Effect.gen(function*() {
            const repository = repositories.get(params.name)
            if (repository === undefined || repository.format !== params.format) return yield* Effect.fail(notFound(params.name))
            return toNexus(repository, originOf(request))
          }))
        .handle("create", ({ params, payload }) =>
          Effect.gen(function*() {
            const decoded = fromNexus(payload, params.format)
            if (!decoded.ok) return yield* Effect.fail(decoded.errors)
            if (repositories.get(decoded.repository.name) !== undefined) {
              return yield* Effect.fail([{ id: "PARAMETER name", message: `a repository named "${decoded.repository.name}" already exists; update it with PUT` }])
            }
            yield* repositories.put(decoded.repository)
          }))
        .handle("update", ({ params, payload }) =>
          Effect.gen(function*() {
            const existing = repositories.get(params.name)
            if (existing === undefined || existing.format !== params.format) return yield* Effect.fail(notFound(params.name))
            const decoded = fromNexus(payload, params.format)
            if (!decoded.ok) return yield* Effect.fail(decoded.errors)
            if (decoded.repository.name !== params.name) {
              return yield* Effect.fail([{ id: "PARAMETER name", message: `the body names "${decoded.repository.name}" but the URL "${params.name}"; repositories cannot be renamed` }])
            }
            // an update without credentials keeps the stored ones (Nexus never returns them to edit)
            const httpClient = decoded.repository.httpClient ?? existing.httpClient
            yield* repositories.put(httpClient === undefined ? decoded.repository : { ...decoded.repository, httpClient })
          }))
        .handle("remove", ({ params }) =>
          Effect.gen(function*() {
            if (repositories.get(params.name) === undefined) return yield* Effect.fail(notFound(params.name))
            const dropped = yield* repositories.remove(params.name)
            yield* Effect.logInfo(`repository "${params.name}" deleted; ${dropped} cache entries released`)
          }))
        .handle("invalidateCache", ({ params }) =>
          Effect.gen(function*() {
            if (repositories.get(params.name) === undefined) return yield* Effect.fail(notFound(params.name))
            const dropped = yield* repositories.invalidate(params.name)
            yield* Effect.logInfo(`repository "${params.name}": cache invalidated, ${dropped} metadata entries dropped`)
          }))
    }))

/** the API as one handler effect, for the listeners' app to call under /service/rest */
export const makeRestApi = (trustedProxies: SourceRanges | undefined) =>
  Effect.gen(function*() {
    const repositories = yield* Repositories
    const routes = HttpApiBuilder.layer(LarderApi, { openapiPath: "/service/rest/swagger.json" }).pipe(
      Layer.provide(repositoriesHandlers(trustedProxies)),
      Layer.provide(Layer.succeed(Repositories, repositories)),
      Layer.provide(HttpServer.layerServices)
    )
    return yield* HttpRouter.toHttpEffect(routes)
  })
