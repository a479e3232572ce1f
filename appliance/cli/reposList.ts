// `larder repos list`: the repositories a running larder (or Nexus) has, with their online state and
// cache hit ratio, from the REST API and the Prometheus metrics.
import { formatRatio, hitRatio, samplesOf } from "../../src/admin/hitRatio.ts"
import { CliError, type RestClient } from "./restClient.ts"

export interface RepositoryRow {
  readonly name: string
  readonly format: string
  readonly online: boolean | undefined
  readonly upstream: string
  readonly requests: number | undefined
  readonly hitRatio: number | undefined
}

const json = (what: string, text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    throw new CliError(`${what} did not answer JSON: ${text.slice(0, 200)}`)
  }
}

export const listRepositories = async (api: RestClient): Promise<ReadonlyArray<RepositoryRow>> => {
  const list = await api.call("GET", "/service/rest/v1/repositories")
  if (list.status !== 200) throw new CliError(`GET /service/rest/v1/repositories answered ${list.status}: ${list.text.slice(0, 200)}`)
  const summaries = json("GET /service/rest/v1/repositories", list.text) as ReadonlyArray<{
    name: string
    format: string
    attributes?: { proxy?: { remoteUrl?: string } }
  }>
  // the list has no online flag: each repository's own object has
  const details = await Promise.all(summaries.map(async (summary) => {
    const one = await api.call("GET", `/service/rest/v1/repositories/${encodeURIComponent(summary.name)}`)
    return one.status === 200 ? (json(`GET ${summary.name}`, one.text) as { online?: boolean }) : undefined
  }))
  // cache counters are larder's; a Nexus answers without them and the columns stay empty
  const metrics = await api.call("GET", "/service/rest/metrics/prometheus")
  const counts = new Map<string, Record<string, number>>()
  if (metrics.status === 200) {
    for (const sample of samplesOf(metrics.text, "larder_cache_requests_total")) {
      const row = counts.get(sample.labels.repository) ?? {}
      row[sample.labels.result] = sample.value
      counts.set(sample.labels.repository, row)
    }
  }
  return summaries.map((summary, i) => {
    const row = counts.get(summary.name)
    const ratio = row === undefined ? undefined : hitRatio(row)
    return {
      name: summary.name,
      format: summary.format,
      online: details[i]?.online,
      upstream: summary.attributes?.proxy?.remoteUrl ?? "",
      requests: metrics.status === 200 ? (ratio?.served ?? 0) : undefined,
      hitRatio: ratio?.ratio
    }
  })
}

export const formatTable = (rows: ReadonlyArray<RepositoryRow>): string => {
  const cells = [
    ["NAME", "FORMAT", "ONLINE", "REQUESTS", "HIT RATIO", "UPSTREAM"],
    ...rows.map((row) => [
      row.name,
      row.format,
      row.online === undefined ? "?" : row.online ? "online" : "offline",
      row.requests === undefined ? "–" : String(row.requests),
      formatRatio(row.hitRatio),
      row.upstream === "" ? "(not set)" : row.upstream
    ])
  ]
  const widths = cells[0].map((_, column) => Math.max(...cells.map((line) => line[column].length)))
  return cells.map((line) => line.map((cell, column) => (column === line.length - 1 ? cell : cell.padEnd(widths[column]))).join("  ")).join("\n")
}
