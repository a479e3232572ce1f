// apt's source lists as data: deb822 `.sources` stanzas and one-line `sources.list` entries, parsed
// into one shape, with the text each came from kept so a stanza larder does not touch is copied
// as it was. Used to find the archives larder proxies by default and to write the client's
// `larder.sources`.

export interface SourceEntry {
  readonly types: ReadonlyArray<string>
  readonly uris: ReadonlyArray<string>
  readonly suites: ReadonlyArray<string>
  readonly components: ReadonlyArray<string>
  /** every other field in deb822 spelling (Signed-By, Architectures, ...); multi-line values keep their continuation lines */
  readonly options: ReadonlyArray<readonly [string, string]>
  readonly enabled: boolean
  /** the stanza or line as written */
  readonly text: string
}

const words = (value: string | undefined) => (value ?? "").split(/\s+/).filter((word) => word !== "")

/** deb822: stanzas separated by blank lines, `Field: value`, continuation lines start with a space or tab */
export const parseDeb822Sources = (text: string): ReadonlyArray<SourceEntry> =>
  text.replaceAll("\r\n", "\n").split(/\n[ \t]*\n/).flatMap((stanza) => {
    const fields: Array<[string, string]> = []
    for (const line of stanza.split("\n")) {
      if (line.startsWith("#")) continue
      if (/^[ \t]/.test(line) && fields.length > 0) {
        fields[fields.length - 1][1] += "\n" + line
        continue
      }
      const match = /^([A-Za-z0-9-]+):[ \t]*(.*)$/.exec(line)
      if (match !== null) fields.push([match[1], match[2].trimEnd()])
    }
    if (fields.length === 0) return []
    const get = (name: string) => fields.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1]
    const known = new Set(["types", "uris", "suites", "components", "enabled"])
    return [{
      types: words(get("Types")),
      uris: words(get("URIs")),
      suites: words(get("Suites")),
      components: words(get("Components")),
      options: fields.filter(([key]) => !known.has(key.toLowerCase())),
      enabled: (get("Enabled") ?? "yes").trim().toLowerCase() !== "no",
      text: stanza.trim()
    }]
  })

// sources.list(5) one-line option names and their deb822 fields
const optionFields: Record<string, string> = {
  arch: "Architectures",
  lang: "Languages",
  target: "Targets",
  pdiffs: "PDiffs",
  "by-hash": "By-Hash",
  "allow-insecure": "Allow-Insecure",
  "allow-weak": "Allow-Weak",
  "allow-downgrade-to-insecure": "Allow-Downgrade-To-Insecure",
  trusted: "Trusted",
  "signed-by": "Signed-By",
  "check-valid-until": "Check-Valid-Until",
  "valid-until-min": "Valid-Until-Min",
  "valid-until-max": "Valid-Until-Max",
  "check-date": "Check-Date",
  "date-max-future": "Date-Max-Future",
  "inrelease-path": "InRelease-Path",
  snapshot: "Snapshot"
}

/** one-line format: `deb [opt=value ...] uri suite [component ...]`, `deb-src` likewise */
export const parseOneLineSources = (text: string): ReadonlyArray<SourceEntry> =>
  text.replaceAll("\r\n", "\n").split("\n").flatMap((raw) => {
    const line = raw.replace(/#.*$/, "").trim()
    const match = /^(deb|deb-src)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)(.*)$/.exec(line)
    if (match === null) return []
    const options = words(match[2]).flatMap((option): Array<[string, string]> => {
      const pair = /^([a-z-]+)=(.*)$/.exec(option)
      if (pair === null) return []
      return [[optionFields[pair[1]] ?? pair[1], pair[2].replaceAll(",", " ")]]
    })
    return [{ types: [match[1]], uris: [match[3]], suites: [match[4]], components: words(match[5]), options, enabled: true, text: raw.trim() }]
  })

export const isSecuritySource = (entry: Pick<SourceEntry, "uris" | "suites">): boolean =>
  entry.suites.some((suite) => suite.endsWith("-security")) || entry.uris.some((uri) => /security/.test(uri))

/** the archives larder's apt-distro and apt-distro-security stand for: the first enabled deb
 *  source with a suite that is not a security suite, and the first with one that is */
export const distributionArchives = (entries: ReadonlyArray<SourceEntry>): { readonly main?: string; readonly security?: string } => {
  const debs = entries.filter((entry) => entry.enabled && entry.types.includes("deb") && entry.uris.length > 0)
  return {
    // a stanza may name both (Suites: jammy jammy-security on one URI)
    main: debs.find((entry) => entry.suites.some((suite) => !suite.endsWith("-security")) && !entry.uris.some((uri) => /security/.test(uri)))?.uris[0],
    security: debs.find(isSecuritySource)?.uris[0]
  }
}

/** renders an entry as a deb822 stanza (continuation lines of multi-line values kept as they were) */
export const renderStanza = (entry: SourceEntry): string =>
  [
    `Types: ${entry.types.join(" ")}`,
    `URIs: ${entry.uris.join(" ")}`,
    `Suites: ${entry.suites.join(" ")}`,
    ...(entry.components.length > 0 ? [`Components: ${entry.components.join(" ")}`] : []),
    ...(entry.enabled ? [] : ["Enabled: no"]),
    ...entry.options.map(([key, value]) => `${key}:${value.startsWith("\n") ? "" : " "}${value}`)
  ].join("\n")
