// The repository actors: one per repository name, started on first use, shared while in use and
// stopped after an idle period (RcMap). Configuration lives in the index; a change swaps the actor
// for new requests while requests in flight finish on the old one.
import { isDeepStrictEqual } from "node:util"
import { Context, Duration, Effect, Exit, Layer, RcMap, Schema } from "effect"
import { Repository } from "../../appliance/config/Repository.ts"
import { Metrics } from "../admin/Metrics.ts"
import { BlobStore } from "../storage/BlobStore.ts"
import { Index } from "../storage/Index.ts"
import { makeSmallBlobCache } from "../storage/SmallBlobCache.ts"
import { rulesFor, type FormatRules } from "../protocols/formats.ts"
import { freshHit, makeRepositoryActor, type RepositoryActor, type RepositoryReply, type RepositoryRequest } from "./RepositoryActor.ts"
import { smallBlob } from "./serveEntry.ts"
import { UpstreamClient } from "./UpstreamClient.ts"

export class UnknownRepository extends Schema.TaggedError<UnknownRepository>()("UnknownRepository", {
  name: Schema.String
}) {}

const decodeStored = Schema.decodeUnknownExit(Repository)

export class Repositories extends Context.Service<Repositories, {
  readonly handle: (name: string, request: RepositoryRequest) => Effect.Effect<RepositoryReply>
  /** a fresh hit answered without I/O, or undefined when the request needs the actor */
  readonly tryHit: (name: string, request: RepositoryRequest) => RepositoryReply | undefined
  readonly get: (name: string) => Repository | undefined
  readonly list: () => ReadonlyArray<Repository>
  /** stores the configuration and applies it to new requests */
  readonly put: (repository: Repository) => Effect.Effect<void>
  /** deletes the repository and releases its cache entries; requests in flight finish first */
  readonly remove: (name: string) => Effect.Effect<number>
  /** drops cached metadata and negative entries (content that never changes stays) */
  readonly invalidate: (name: string) => Effect.Effect<number>
}>()("larder/actors/Repositories") {
  static readonly layer = (
    options: { readonly idleTimeToLive?: Duration.Input; readonly smallBlobCacheBytes?: number } = {}
  ) =>
    Layer.effect(
      Repositories,
      Effect.gen(function*() {
        const index = yield* Index
        const deps = {
          index,
          blobs: yield* BlobStore,
          client: yield* UpstreamClient,
          metrics: yield* Metrics,
          // shared by all repositories: a layer pulled through two of them is kept once
          smallBlobs: makeSmallBlobCache(options.smallBlobCacheBytes ?? 64 * 1024 * 1024, smallBlob),
          rewritten: makeSmallBlobCache(32 * 1024 * 1024, 8 * 1024 * 1024)
        }
        const configs = new Map<string, Repository>()
        for (const stored of index.repositories()) {
          const exit = decodeStored(stored)
          if (Exit.isSuccess(exit)) configs.set(exit.value.name, exit.value)
          else yield* Effect.logWarning(`ignoring a stored repository configuration that no longer decodes: ${JSON.stringify(stored)}`)
        }
        const actors = yield* RcMap.make({
          lookup: (name: string) =>
            Effect.gen(function*() {
              const config = configs.get(name)
              if (config === undefined) return yield* new UnknownRepository({ name })
              return yield* Effect.acquireRelease(
                Effect.sync(() => makeRepositoryActor(config, deps)),
                (actor: RepositoryActor) => Effect.promise(() => actor.drain())
              )
            }),
          idleTimeToLive: options.idleTimeToLive ?? Duration.minutes(10)
        })

        const handle = (name: string, request: RepositoryRequest) =>
          Effect.scoped(
            RcMap.get(actors, name).pipe(
              Effect.flatMap((actor) => actor.handle(request)),
              Effect.catchTag("UnknownRepository", () =>
                Effect.succeed<RepositoryReply>({
                  kind: "error",
                  status: 404,
                  message: `repository "${name}" does not exist; GET /service/rest/v1/repositories lists the repositories`
                })),
              Effect.catchDefect((defect) => {
                // A crashed actor: logged with its key, counted, dropped so the next use recreates it.
                deps.metrics.actorCrashes.inc({ actor: "repository" })
                return Effect.logError(`repository actor "${name}" crashed: ${defect}`).pipe(
                  Effect.andThen(RcMap.invalidate(actors, name)),
                  Effect.as<RepositoryReply>({ kind: "error", status: 500, message: `repository "${name}" failed; retry the request` })
                )
              })
            )
          )

        const rulesByName = new Map<string, FormatRules>()
        const tryHit = (name: string, request: RepositoryRequest): RepositoryReply | undefined => {
          const config = configs.get(name)
          if (config === undefined) return undefined
          let rules = rulesByName.get(name)
          if (rules === undefined) {
            rules = rulesFor(config)
            rulesByName.set(name, rules)
          }
          return freshHit(config, rules, deps, request)
        }

        return Repositories.of({
          handle,
          tryHit,
          get: (name) => configs.get(name),
          list: () => [...configs.values()],
          put: (repository) =>
            Effect.gen(function*() {
              // the same config again (a create-or-update script's second run) keeps the actor and its state
              if (isDeepStrictEqual(configs.get(repository.name), repository)) return
              yield* Effect.promise(() => index.putRepository(repository.name, repository))
              configs.set(repository.name, repository)
              rulesByName.delete(repository.name)
              yield* RcMap.invalidate(actors, repository.name)
            }),
          invalidate: (name) =>
            Effect.promise(() => {
              const config = configs.get(name)
              const rules = config === undefined ? undefined : rulesFor(config)
              return index.invalidate(name, (path) => {
                if (path === undefined || rules === undefined) return true
                const route = rules.classify("GET", path)
                // derived keys (an abbreviated packument, a JSON page) do not classify: metadata
                return route.kind !== "cached" || route.freshness !== "immutable"
              })
            }),
          remove: (name) =>
            Effect.gen(function*() {
              configs.delete(name)
              rulesByName.delete(name)
              yield* RcMap.invalidate(actors, name)
              return yield* Effect.promise(() => index.removeRepository(name))
            })
        })
      })
    )
}
