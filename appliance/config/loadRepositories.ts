// The repository set larder starts with: the embedded defaults, overridden by name by the
// --repositories file. Every source is decoded with Schema; a bad file names file, field, expectation.
import { readFileSync } from "node:fs"
import { Effect, Exit, Schema } from "effect"
import { parse as parseYaml } from "yaml"
import { RepositoryList, type Repository } from "./Repository.ts"
import { resolveMachineUpstreams, type UpstreamSource } from "./machineUpstreams.ts"

export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  message: Schema.String
}) {}

export const defaultsFile = new URL("../defaults/repositories.yaml", import.meta.url).pathname

const readDocument = (file: string): Effect.Effect<unknown, ConfigError> =>
  Effect.try({
    try: () => parseYaml(readFileSync(file, "utf8")) as unknown,
    catch: (cause) =>
      new ConfigError({
        message: `${file}: cannot read repositories: ${cause instanceof Error ? cause.message : String(cause)}`
      })
  })

export const decodeRepositories = (file: string, document: unknown): Effect.Effect<ReadonlyArray<Repository>, ConfigError> => {
  const exit = Schema.decodeUnknownExit(RepositoryList)(document, { errors: "all" })
  if (Exit.isSuccess(exit)) return Effect.succeed(exit.value)
  return Effect.fail(new ConfigError({ message: `${file}: invalid repository configuration:\n${indent(describe(exit))}` }))
}

const describe = (exit: Exit.Exit<unknown, Schema.SchemaError>): string => {
  if (Exit.isSuccess(exit)) return ""
  const errors = exit.cause.reasons.flatMap((reason) => (reason._tag === "Fail" ? [reason.error.message] : []))
  return errors.join("\n")
}

const indent = (text: string) => text.split("\n").map((line) => "  " + line).join("\n")

export const loadRepositories = (file: string | undefined) =>
  Effect.gen(function*() {
    const defaultsDocument = yield* readDocument(defaultsFile)
    const defaults = yield* decodeRepositories(defaultsFile, defaultsDocument)
    const overrides = file === undefined ? [] : yield* decodeRepositories(file, yield* readDocument(file))
    const byName = new Map<string, Repository>()
    for (const repository of defaults) byName.set(repository.name, repository)
    const overridden = new Set(overrides.map((r) => r.name))
    const sources = new Map<string, UpstreamSource>()
    for (const entry of defaultsDocument as ReadonlyArray<{ name: string; upstreamFrom?: UpstreamSource }>) {
      if (entry.upstreamFrom !== undefined && !overridden.has(entry.name)) sources.set(entry.name, entry.upstreamFrom)
    }
    if (sources.size > 0) {
      const resolved = yield* Effect.promise(() => resolveMachineUpstreams(new Set(sources.values())))
      for (const [name, source] of sources) {
        const repository = byName.get(name)!
        byName.set(name, { ...repository, proxy: { ...repository.proxy, remoteUrl: resolved[source] } })
      }
    }
    for (const repository of overrides) byName.set(repository.name, repository)
    return { repositories: [...byName.values()], overridden }
  })
