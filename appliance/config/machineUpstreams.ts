// Default upstreams that larder reads from the machine it runs on instead of naming them:
// npm's configured registry and the archives in the apt sources.
import { execFile } from "node:child_process"
import { promises as fs } from "node:fs"
import { join } from "node:path"
import { isSecuritySource, parseDeb822Sources, parseOneLineSources } from "./aptSources.ts"

export type UpstreamSource = "npm-registry" | "apt-main" | "apt-security"

export interface AptSource {
  readonly uri: string
  readonly suites: ReadonlyArray<string>
}

/** the enabled deb sources of a deb822 `.sources` or one-line `sources.list` text, one per URI */
export const parseAptSources = (text: string, deb822: boolean): ReadonlyArray<AptSource> =>
  (deb822 ? parseDeb822Sources(text) : parseOneLineSources(text))
    .filter((entry) => entry.enabled && entry.types.includes("deb"))
    .flatMap((entry) => entry.uris.map((uri) => ({ uri, suites: entry.suites })))

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
    const isSecurity = (source: AptSource) => isSecuritySource({ uris: [source.uri], suites: source.suites })
    result["apt-main"] = sources.find((s) => !isSecurity(s))?.uri ?? ""
    result["apt-security"] = sources.find(isSecurity)?.uri ?? ""
  }
  result["npm-registry"] = await npm
  return result
}
