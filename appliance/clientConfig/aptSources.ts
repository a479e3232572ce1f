// `larder.sources` for a client: the distribution's archive and its security archive pointed at
// apt-distro and apt-distro-security, everything else in the client's stanzas (suites, components,
// Signed-By, architectures) kept. The files those archives came from are disabled by renaming, so
// the change is undone by renaming back; the list of what was renamed travels in larder.sources.
import { distributionArchives, isSecuritySource, parseDeb822Sources, parseOneLineSources, renderStanza, type SourceEntry } from "../config/aptSources.ts"
import { ClientConfigError, repositoryUrl, type LanHost } from "./lanHost.ts"

export interface AptSourcesFile {
  /** relative to etc/apt: "sources.list", "sources.list.d/debian.sources", ... */
  readonly path: string
  readonly text: string
}

export const larderSourcesPath = "sources.list.d/larder.sources"
export const writtenBy = "# larder.sources: written by `larder client-config apt`."
const disabledMarker = "# larder-disabled: "

export const isDeb822 = (path: string) => path.endsWith(".sources")

const entriesOf = (file: AptSourcesFile): ReadonlyArray<SourceEntry> =>
  isDeb822(file.path) ? parseDeb822Sources(file.text) : parseOneLineSources(file.text)

const sameUri = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "")

/** a stanza naming both kinds of suite (`Suites: bookworm bookworm-security`) becomes two */
const splitSecuritySuites = (entry: SourceEntry): ReadonlyArray<SourceEntry> => {
  const security = entry.suites.filter((suite) => suite.endsWith("-security"))
  if (security.length === 0 || security.length === entry.suites.length) return [entry]
  return [{ ...entry, suites: entry.suites.filter((suite) => !suite.endsWith("-security")) }, { ...entry, suites: security }]
}

export interface LarderSources {
  readonly text: string
  /** files whose archives now come from larder: renamed to <path>.disabled on --apply */
  readonly disable: ReadonlyArray<string>
}

/** `files` in apt's reading order (sources.list, then sources.list.d by name) */
export const renderLarderSources = (files: ReadonlyArray<AptSourcesFile>, lan: LanHost): LarderSources => {
  const archives = distributionArchives(files.flatMap(entriesOf))
  if (archives.main === undefined && archives.security === undefined) {
    throw new ClientConfigError(
      `no distribution archive in ${files.map((file) => file.path).join(", ") || "the apt sources (none found)"}: nothing to point at larder`
    )
  }
  // an entry's archive is told by its suites as well as its URI: Ubuntu serves jammy-security from
  // the same URI as jammy
  const proxied = (entry: SourceEntry, uri: string) =>
    isSecuritySource(entry)
      ? archives.security !== undefined && sameUri(uri, archives.security) ? repositoryUrl(lan, "apt-distro-security") : undefined
      : archives.main !== undefined && sameUri(uri, archives.main) ? repositoryUrl(lan, "apt-distro") : undefined
  const disable: Array<string> = []
  const stanzas: Array<string> = []
  for (const file of files) {
    const entries = entriesOf(file).flatMap(splitSecuritySuites)
    if (!entries.some((entry) => entry.uris.some((uri) => proxied(entry, uri) !== undefined))) continue
    disable.push(file.path)
    for (const entry of entries) {
      const uris = entry.uris.map((uri) => proxied(entry, uri) ?? uri)
      if (uris.some((uri, i) => uri !== entry.uris[i])) {
        stanzas.push(`# from ${file.path}\n` + renderStanza({ ...entry, uris }))
      } else {
        // a stanza larder has no proxy for: kept as it was, so disabling its file loses nothing
        stanzas.push(`# from ${file.path}, not through larder\n` + (isDeb822(file.path) ? entry.text : renderStanza(entry)))
      }
    }
  }
  const header = [
    writtenBy,
    `# apt-distro and apt-distro-security on larder (${lan.baseUrl}) stand in for the archives below.`,
    "# `larder client-config apt --revert` renames these files back and removes this one:",
    ...disable.map((path) => disabledMarker + path)
  ]
  return { text: header.join("\n") + "\n\n" + stanzas.join("\n\n") + "\n", disable }
}

/** the files an earlier --apply renamed, from the larder.sources it wrote */
export const disabledBy = (larderSources: string): ReadonlyArray<string> =>
  larderSources
    .split("\n")
    .filter((line) => line.startsWith(disabledMarker))
    .map((line) => line.slice(disabledMarker.length).trim())
    // only names apt reads, so an edited marker cannot rename anything else
    .filter(isSourcesPath)

export const isSourcesPath = (path: string): boolean =>
  path === "sources.list" || (/^sources\.list\.d\/[A-Za-z0-9_.-]+\.(list|sources)$/.test(path) && path !== larderSourcesPath)
