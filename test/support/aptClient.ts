// The real apt-get with every directory it reads or writes below one private root, so tests and
// benchmarks change nothing on the host: sources, lists, caches, status, logs and keyrings.
import { execFile } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

export interface AptSource {
  readonly uri: string
  /** "stable", or "./" for a flat repository */
  readonly suite: string
  readonly keyring: string
}

export interface AptClient {
  readonly root: string
  /** where `apt-get download` puts packages (the working directory) */
  readonly work: string
  readonly archives: string
  readonly aptGet: (args: ReadonlyArray<string>, extraOptions?: ReadonlyArray<string>) => Promise<{ stdout: string; stderr: string }>
}

export const makeAptClient = (root: string, sources: ReadonlyArray<AptSource>): AptClient => {
  for (const dir of ["state/lists/partial", "cache/archives/partial", "etc/sources.list.d", "etc/apt.conf.d", "etc/preferences.d", "etc/trusted.gpg.d", "log", "work"]) {
    mkdirSync(join(root, dir), { recursive: true })
  }
  for (const empty of ["status", "etc/apt.conf", "etc/sources.list", "etc/preferences", "etc/trusted.gpg"]) writeFileSync(join(root, empty), "")
  writeFileSync(join(root, "etc/sources.list.d/larder.sources"), sources.map((source) => [
    "Types: deb",
    `URIs: ${source.uri}`,
    `Suites: ${source.suite}`,
    ...(source.suite.endsWith("/") ? [] : ["Components: main"]),
    `Signed-By: ${source.keyring}`,
    ""
  ].join("\n")).join("\n"))
  const options = [
    `Dir::State=${root}/state`,
    `Dir::State::status=${root}/status`,
    `Dir::Cache=${root}/cache`,
    `Dir::Etc::SourceList=${root}/etc/sources.list`,
    `Dir::Etc::SourceParts=${root}/etc/sources.list.d`,
    `Dir::Etc::Parts=${root}/etc/apt.conf.d`,
    `Dir::Etc::Preferences=${root}/etc/preferences`,
    `Dir::Etc::PreferencesParts=${root}/etc/preferences.d`,
    `Dir::Etc::Trusted=${root}/etc/trusted.gpg`,
    `Dir::Etc::TrustedParts=${root}/etc/trusted.gpg.d`,
    `Dir::Log=${root}/log`,
    "Debug::NoLocking=1",
    "APT::Sandbox::User=root",
    "APT::Architecture=amd64",
    "APT::Architectures=amd64",
    "Acquire::Languages=none",
    "Acquire::Retries=0"
  ]
  const work = join(root, "work")
  return {
    root,
    work,
    archives: join(root, "cache/archives"),
    aptGet: (args, extraOptions = []) =>
      run("apt-get", [...[...options, ...extraOptions].flatMap((option) => ["-o", option]), ...args], {
        cwd: work,
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", DEBIAN_FRONTEND: "noninteractive", APT_CONFIG: join(root, "etc/apt.conf") }
      })
  }
}
