// `larder repos apply FILE`: makes the repositories a running larder (or Nexus) has match a file of
// repository objects, through the REST API, idempotently: GET each one, POST what is missing, PUT
// only what differs, and print the plan (`+ create`, `~ update name: field a -> b`, `= unchanged`).
import { readFileSync } from "node:fs"
import { Effect, Exit } from "effect"
import { parse as parseYaml } from "yaml"
import { decodeRepositories } from "../config/loadRepositories.ts"
import type { Repository } from "../config/Repository.ts"
import { CliError, makeRestClient } from "./restClient.ts"

export interface Plan {
  readonly name: string
  readonly action: "create" | "update" | "unchanged"
  /** "field: old -> new" for updates */
  readonly changes: ReadonlyArray<string>
}

// the fields a proxy repository's behaviour depends on, as "path" -> value
const compared = (repository: Record<string, unknown>): Record<string, unknown> => {
  const proxy = (repository.proxy ?? {}) as Record<string, unknown>
  const negative = (repository.negativeCache ?? {}) as Record<string, unknown>
  const authentication = ((repository.httpClient ?? {}) as { authentication?: { username?: unknown } | null }).authentication
  return {
    online: repository.online,
    "proxy.remoteUrl": proxy.remoteUrl,
    "proxy.contentMaxAge": proxy.contentMaxAge,
    "proxy.metadataMaxAge": proxy.metadataMaxAge,
    "negativeCache.enabled": negative.enabled,
    "negativeCache.timeToLive": negative.timeToLive,
    // passwords are never returned, so only the user name can be compared
    "httpClient.authentication.username": authentication?.username ?? null
  }
}

/** what it takes to make `remote` (the API's object, or undefined when missing) match `desired` */
export const planFor = (desired: Repository, remote: Record<string, unknown> | undefined): Plan => {
  if (remote === undefined) return { name: desired.name, action: "create", changes: [] }
  const want = compared(desired as unknown as Record<string, unknown>)
  const have = compared(remote)
  const changes = Object.keys(want)
    .filter((field) => JSON.stringify(want[field]) !== JSON.stringify(have[field]))
    .map((field) => `${field} ${JSON.stringify(have[field]) ?? "unset"} -> ${JSON.stringify(want[field])}`)
  return { name: desired.name, action: changes.length === 0 ? "unchanged" : "update", changes }
}

export const formatPlan = (plan: Plan): string =>
  plan.action === "create"
    ? `+ create ${plan.name}`
    : plan.action === "update"
    ? `~ update ${plan.name}: ${plan.changes.join(", ")}`
    : `= unchanged ${plan.name}`

export interface ApplyOptions {
  readonly file: string
  readonly url: string
  readonly user: string
  readonly password: string
  readonly dryRun: boolean
  readonly only: string | undefined
  readonly print: (line: string) => void
}


const readFile = (file: string): unknown => {
  try {
    return parseYaml(readFileSync(file, "utf8")) as unknown
  } catch (error) {
    throw new CliError(`${file}: cannot read repositories: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** runs the plan (or only prints it with dryRun); throws CliError naming the failing repository */
export const applyRepositories = async (options: ApplyOptions): Promise<ReadonlyArray<Plan>> => {
  const document = readFile(options.file)
  const decoded = await Effect.runPromiseExit(decodeRepositories(options.file, Array.isArray(document) ? document : [document]))
  if (Exit.isFailure(decoded)) {
    const failure = decoded.cause.reasons.find((reason) => reason._tag === "Fail")
    throw new CliError(failure?._tag === "Fail" ? failure.error.message : `${options.file}: cannot decode`)
  }
  const all = decoded.value
  let repositories = all
  if (options.only !== undefined) {
    repositories = repositories.filter((repository) => repository.name === options.only)
    if (repositories.length === 0) {
      throw new CliError(`--only ${options.only}: no such repository in ${options.file}; it has ${all.map((r) => r.name).join(", ")}`)
    }
  }
  const api = makeRestClient(options)
  const base = "/service/rest/v1/repositories"
  const call = (method: string, path: string, body?: unknown) => api.call(method, base + path, body)
  const plans: Array<Plan> = []
  const counts = { create: 0, update: 0, unchanged: 0 }
  for (const repository of repositories) {
    const path = `/${repository.format}/proxy/${encodeURIComponent(repository.name)}`
    const current = await call("GET", path)
    if (current.status !== 200 && current.status !== 404) throw new CliError(`${repository.name}: GET answered ${current.status}: ${current.text}`)
    const plan = planFor(repository, current.status === 200 ? JSON.parse(current.text) : undefined)
    plans.push(plan)
    counts[plan.action]++
    options.print(formatPlan(plan))
    if (options.dryRun || plan.action === "unchanged") continue
    const sent = plan.action === "create"
      ? await call("POST", `/${repository.format}/proxy`, repository)
      : await call("PUT", path, repository)
    if (sent.status >= 300) throw new CliError(`${repository.name}: ${plan.action} failed with ${sent.status}: ${sent.text}`)
  }
  options.print(`${options.dryRun ? "dry run, nothing changed: " : ""}${counts.create} to create, ${counts.update} to update, ${counts.unchanged} unchanged`)
  return plans
}
