// Default upstreams that larder reads from the machine it runs on instead of naming them:
// npm's configured registry and the archives in the apt sources.
import { execFile } from "node:child_process"
import { promises as fs } from "node:fs"
import { join } from "node:path"

export type UpstreamSource = "npm-registry" | "apt-main" | "apt-security"

export interface AptSource {
  readonly uri: string
  readonly suites: ReadonlyArray<string>
}

/** Parses deb822 `.sources` stanzas and one-line `sources.list` entries (deb lines only). */
export const parseAptSources = (text: string, deb822: boolean): ReadonlyArray<AptSource> => {
  if (!deb822) {
    return text.split("\n").flatMap((line) => {
      const match = /^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line)
      return match === null ? [] : [{ uri: match[1], suites: [match[2]] }]
    })
  }
  return text.split(/\n\s*\n/).flatMap((stanza) => {
    const field = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, "mi").exec(stanza)?.[1].trim()
    if (!(field("Types") ?? "").split(/\s+/).includes("deb")) return []
    if (field("Enabled")?.toLowerCase() === "no") return []
    const uris = field("URIs")?.split(/\s+/) ?? []
    const suites = field("Suites")?.split(/\s+/) ?? []
    return uris.map((uri) => ({ uri, suites }))
  })
}

const isSecurity = (source: AptSource) =>
  source.suites.some((suite) => suite.endsWith("-security")) || /security/.test(source.uri)

export const readAptSources = async (root = "/etc/apt"): Promise<ReadonlyArray<AptSource>> => {
  const sources: Array<AptSource> = []
  const read = (path: string) => fs.readFile(path, "utf8").catch(() => "")
  sources.push(...parseAptSources(await read(join(root, "sources.list")), false))
  const dir = join(root, "sources.list.d")
  const names = await fs.readdir(dir).catch(() => [] as Array<string>)
  for (const name of names.sort()) {
    if (name.endsWith(".sources")) sources.push(...parseAptSources(await read(join(dir, name)), true))
    else if (name.endsWith(".list")) sources.push(...parseAptSources(await read(join(dir, name)), false))
  }
  return sources
}

const npmRegistry = () =>
  new Promise<string>((resolve) => {
    execFile("npm", ["config", "get", "registry"], { timeout: 10_000 }, (error, stdout) => {
      const url = stdout?.trim() ?? ""
      resolve(error === null && /^https?:\/\//.test(url) ? url : "")
    })
  })

/** Resolves each requested source to a URL, or "" when this machine does not say. */
export const resolveMachineUpstreams = async (
  wanted: ReadonlySet<UpstreamSource>
): Promise<Record<UpstreamSource, string>> => {
  const result: Record<UpstreamSource, string> = { "npm-registry": "", "apt-main": "", "apt-security": "" }
  const npm = wanted.has("npm-registry") ? npmRegistry() : Promise.resolve("")
  if (wanted.has("apt-main") || wanted.has("apt-security")) {
    const sources = await readAptSources()
    result["apt-main"] = sources.find((s) => !isSecurity(s))?.uri ?? ""
    result["apt-security"] = sources.find(isSecurity)?.uri ?? ""
  }
  result["npm-registry"] = await npm
  return result
}
