// A repository object in Nexus's REST shape: the fields larder uses (others are ignored).
// Ages and TTLs are minutes, as in Nexus.
import { Effect, Schema } from "effect"


export const formats = ["docker", "apt", "npm", "pypi", "go", "cargo", "helm", "raw"] as const
export type Format = (typeof formats)[number]

// Nexus takes whole minutes; fractions are accepted too (tests use short TTLs)
const Minutes = Schema.Number.check(Schema.isGreaterThanOrEqualTo(-1))

export const RepositoryName = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, {
    message: "Expected a repository name of letters, digits, '.', '_' and '-'"
  })
)

export const RemoteUrl = Schema.String.check(
  Schema.isPattern(/^(https?:\/\/[^\s/?#]+[^\s]*)?$/, { message: "Expected an http(s) URL" })
)

export const Repository = Schema.Struct({
  name: RepositoryName,
  format: Schema.Literals(formats),
  type: Schema.Literal("proxy").pipe(Schema.withDecodingDefaultKey(Effect.succeed("proxy"))),
  online: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(true))),
  proxy: Schema.Struct({
    remoteUrl: RemoteUrl.pipe(Schema.withDecodingDefaultKey(Effect.succeed(""))),
    contentMaxAge: Minutes.pipe(Schema.withDecodingDefaultKey(Effect.succeed(1440))),
    metadataMaxAge: Minutes.pipe(Schema.withDecodingDefaultKey(Effect.succeed(1440)))
  }),
  negativeCache: Schema.Struct({
    enabled: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(true))),
    timeToLive: Minutes.pipe(Schema.withDecodingDefaultKey(Effect.succeed(1440)))
  }).pipe(Schema.withDecodingDefaultKey(Effect.succeed({ enabled: true, timeToLive: 1440 }))),
  // Nexus's upstream credentials (used for registry token requests); never sent back by the API
  httpClient: Schema.optionalKey(Schema.Struct({
    authentication: Schema.optionalKey(Schema.Struct({
      type: Schema.optionalKey(Schema.String),
      username: Schema.String,
      password: Schema.String
    }))
  }))
})
export type Repository = typeof Repository.Type

export const RepositoryList = Schema.Array(Repository)

/** minutes as Nexus counts them (-1 = forever) to milliseconds */
export const minutesToMs = (minutes: number): number => (minutes < 0 ? Number.POSITIVE_INFINITY : minutes * 60_000)
