// loadRepositories: the 13 embedded defaults overridden by name by a YAML or JSON file; a bad file
// fails with a ConfigError naming the file, the field and what was expected.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import t from "tap"
import { Effect, Exit, Option } from "effect"
import { ConfigError, loadRepositories } from "../../appliance/config/loadRepositories.ts"
import type { Repository } from "../../appliance/config/Repository.ts"

const dir = mkdtempSync(join(tmpdir(), "larder-repos-"))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
const writeFile = (name: string, content: string) => {
  const file = join(dir, `${files++}-${name}`)
  writeFileSync(file, content)
  return file
}

const defaultNames = [
  "docker-public", "docker-codehost", "docker-registry3", "apt-distro", "apt-distro-security", "npm-proxy",
  "pypi-proxy", "go-proxy", "cargo-proxy", "helm-stable", "helm-vendor", "infra-registry", "raw-codehost"
]

const failure = async (file: string) => {
  const exit = await Effect.runPromiseExit(loadRepositories(file))
  const error = Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined
  return { failed: Exit.isFailure(exit), error }
}

t.test("the defaults are exactly the 13 repositories", async (t) => {
  const { repositories, overridden } = await Effect.runPromise(loadRepositories(undefined))
  t.same(repositories.map((r) => r.name), defaultNames, "names, in order")
  t.same([...overridden], [], "nothing overridden")
  const cases: ReadonlyArray<readonly [name: string, format: string]> = [
    ["docker-public", "docker"],
    ["docker-codehost", "docker"],
    ["docker-registry3", "docker"],
    ["apt-distro", "apt"],
    ["apt-distro-security", "apt"],
    ["npm-proxy", "npm"],
    ["pypi-proxy", "pypi"],
    ["go-proxy", "go"],
    ["cargo-proxy", "cargo"],
    ["helm-stable", "helm"],
    ["helm-vendor", "helm"],
    ["infra-registry", "raw"],
    ["raw-codehost", "raw"]
  ]
  for (const [name, format] of cases) {
    const repository = repositories.find((r) => r.name === name)
    t.same(
      repository === undefined
        ? undefined
        : {
          format: repository.format,
          type: repository.type,
          online: repository.online,
          ages: [repository.proxy.contentMaxAge, repository.proxy.metadataMaxAge],
          negativeCache: repository.negativeCache,
          remoteUrlIsHttpOrEmpty: /^(https?:\/\/\S+)?$/.test(repository.proxy.remoteUrl)
        },
      {
        format,
        type: "proxy",
        online: true,
        ages: [1440, 1440],
        negativeCache: { enabled: true, timeToLive: 1440 },
        remoteUrlIsHttpOrEmpty: true
      },
      name
    )
  }
})

t.test("a file overrides defaults by name, and Nexus's defaults fill what it leaves out", async (t) => {
  const json = writeFile("repos.json", JSON.stringify([
    { name: "raw-codehost", format: "raw", proxy: { remoteUrl: "http://raw.example/files/" } },
    { name: "npm-proxy", format: "npm", online: false, proxy: { remoteUrl: "http://npm.example/" } }
  ]))
  const yaml = writeFile("repos.yaml", `# overrides
- name: helm-stable
  format: helm
  proxy:
    remoteUrl: http://charts.example/stable/
    contentMaxAge: -1
  negativeCache:
    enabled: false
- name: extra-raw
  format: raw
  proxy: { remoteUrl: "https://files.example/" }
`)
  const expected = (name: string, format: Repository["format"], remoteUrl: string, more: Partial<Repository> = {}): Repository => ({
    name,
    format,
    type: "proxy",
    online: true,
    proxy: { remoteUrl, contentMaxAge: 1440, metadataMaxAge: 1440 },
    negativeCache: { enabled: true, timeToLive: 1440 },
    ...more
  })
  const cases: ReadonlyArray<readonly [label: string, file: string, names: ReadonlyArray<string>, overridden: ReadonlyArray<string>, repositories: ReadonlyArray<Repository>]> = [
    [
      "JSON",
      json,
      defaultNames,
      ["npm-proxy", "raw-codehost"],
      [
        expected("raw-codehost", "raw", "http://raw.example/files/"),
        expected("npm-proxy", "npm", "http://npm.example/", { online: false })
      ]
    ],
    [
      "YAML",
      yaml,
      [...defaultNames, "extra-raw"],
      ["extra-raw", "helm-stable"],
      [
        expected("helm-stable", "helm", "http://charts.example/stable/", {
          proxy: { remoteUrl: "http://charts.example/stable/", contentMaxAge: -1, metadataMaxAge: 1440 },
          negativeCache: { enabled: false, timeToLive: 1440 }
        }),
        expected("extra-raw", "raw", "https://files.example/")
      ]
    ]
  ]
  for (const [label, file, names, overridden, repositories] of cases) {
    const loaded = await Effect.runPromise(loadRepositories(file))
    t.same(loaded.repositories.map((r) => r.name), names, `${label}: names`)
    t.same([...loaded.overridden].sort(), overridden, `${label}: overridden`)
    for (const repository of repositories) {
      t.same(loaded.repositories.find((r) => r.name === repository.name), repository, `${label}: ${repository.name}`)
    }
  }
  const nexusShaped = writeFile("nexus.json", JSON.stringify([
    { name: "raw-codehost", format: "raw", recipe: "raw-proxy", storage: { blobStoreName: "default" }, proxy: { remoteUrl: "http://raw.example/" } }
  ]))
  const kept = (await Effect.runPromise(loadRepositories(nexusShaped))).repositories.find((r) => r.name === "raw-codehost") as
    | Record<string, unknown>
    | undefined
  t.same(
    { recipe: kept?.["recipe"], storage: kept?.["storage"], remoteUrl: (kept?.["proxy"] as { remoteUrl?: string })?.remoteUrl },
    { recipe: undefined, storage: undefined, remoteUrl: "http://raw.example/" },
    "Nexus fields larder does not use are accepted and ignored (Repository.ts header comment)"
  )
  const untouched = await Effect.runPromise(loadRepositories(json))
  t.same(
    untouched.repositories.find((r) => r.name === "docker-public")?.proxy.remoteUrl,
    (await Effect.runPromise(loadRepositories(undefined))).repositories.find((r) => r.name === "docker-public")?.proxy.remoteUrl,
    "repositories the file does not name keep their defaults"
  )
})

t.test("a bad file fails with a ConfigError naming the file, the field and the expectation", async (t) => {
  const cases: ReadonlyArray<readonly [label: string, name: string, content: string, fragments: ReadonlyArray<string>]> = [
    [
      "remoteUrl is a number",
      "remote-number.yaml",
      "- name: raw-codehost\n  format: raw\n  proxy: { remoteUrl: 3 }\n",
      ["invalid repository configuration", "Expected string", `at [0]["proxy"]["remoteUrl"]`]
    ],
    [
      "remoteUrl is not http(s)",
      "remote-ftp.yaml",
      "- name: raw-codehost\n  format: raw\n  proxy: { remoteUrl: ftp://files.example/ }\n",
      ["Expected an http(s) URL", `at [0]["proxy"]["remoteUrl"]`]
    ],
    [
      "unknown format",
      "format.yaml",
      "- name: raw-codehost\n  format: rww\n  proxy: {}\n",
      [`Expected "docker" | "apt" | "npm" | "pypi" | "go" | "cargo" | "helm" | "raw"`, `at [0]["format"]`]
    ],
    [
      "timeToLive is a string",
      "ttl.yaml",
      "- name: raw-codehost\n  format: raw\n  proxy: {}\n  negativeCache: { timeToLive: \"x\" }\n",
      ["Expected number", `at [0]["negativeCache"]["timeToLive"]`]
    ],
    [
      "every problem is reported, in the second entry too",
      "several.json",
      JSON.stringify([
        { name: "raw-codehost", format: "raw", proxy: {} },
        { name: "bad name!", format: "rww", online: "yes", proxy: { remoteUrl: 3, contentMaxAge: -5 } }
      ]),
      [
        "Expected a repository name of letters, digits, '.', '_' and '-'",
        `at [1]["name"]`,
        `at [1]["format"]`,
        "Expected boolean",
        `at [1]["online"]`,
        `at [1]["proxy"]["remoteUrl"]`,
        `at [1]["proxy"]["contentMaxAge"]`
      ]
    ],
    [
      "missing proxy",
      "no-proxy.yaml",
      "- name: raw-codehost\n  format: raw\n",
      [`at [0]["proxy"]`]
    ],
    [
      "age below -1",
      "age.yaml",
      "- name: raw-codehost\n  format: raw\n  proxy: { metadataMaxAge: -2 }\n",
      [`at [0]["proxy"]["metadataMaxAge"]`]
    ],
    [
      "not a list",
      "object.yaml",
      "name: raw-codehost\nformat: raw\n",
      ["invalid repository configuration", "Expected array"]
    ]
  ]
  for (const [label, name, content, fragments] of cases) {
    const file = writeFile(name, content)
    const { failed, error } = await failure(file)
    const message = error instanceof ConfigError ? error.message : String(error)
    t.same(
      { failed, isConfigError: error instanceof ConfigError, startsWithFile: message.startsWith(`${file}: `) },
      { failed: true, isConfigError: true, startsWithFile: true },
      `${label}: a ConfigError naming ${file}`
    )
    t.same(fragments.filter((fragment) => !message.includes(fragment)), [], `${label}: the message names ${fragments.join("; ")}`)
  }
})

t.test("a file that cannot be read or parsed fails naming the file", async (t) => {
  const missing = join(dir, "does-not-exist.yaml")
  const cases: ReadonlyArray<readonly [label: string, file: string, detail: RegExp]> = [
    ["missing file", missing, /ENOENT/],
    ["unparsable YAML", writeFile("broken.yaml", "- name: [unclosed\n"), /./],
    ["unparsable JSON", writeFile("broken.json", "[{\"name\": \"raw-codehost\",]"), /./],
    ["a directory", dir, /EISDIR/]
  ]
  for (const [label, file, detail] of cases) {
    const { failed, error } = await failure(file)
    const message = error instanceof ConfigError ? error.message : String(error)
    t.same(
      { failed, isConfigError: error instanceof ConfigError, prefix: message.startsWith(`${file}: cannot read repositories: `), detail: detail.test(message) },
      { failed: true, isConfigError: true, prefix: true, detail: true },
      `${label}: ${message}`
    )
  }
})
