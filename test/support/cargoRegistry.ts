// A sparse cargo registry fixture: config.json, index files and .crate archives on counting
// upstreams (downloads on a second host, as crates.io serves them from a CDN).
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import { readFile, rm } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { indexPath } from "../../src/protocols/cargo/rules.ts"
import { tempDir } from "./appliance.ts"
import type { Upstream } from "./upstream.ts"

const run = promisify(execFile)

export interface CrateVersion {
  readonly name: string
  readonly version: string
  /** name -> version requirement */
  readonly deps?: Record<string, string>
  readonly lib?: string
}

/** a .crate as `cargo package` makes it: <name>-<version>/Cargo.toml and src/lib.rs, gzipped tar */
export const packageCrate = async (crate: CrateVersion): Promise<Buffer> => {
  const dir = tempDir("larder-crate-")
  try {
    const root = join(dir, `${crate.name}-${crate.version}`)
    mkdirSync(join(root, "src"), { recursive: true })
    const deps = Object.entries(crate.deps ?? {}).map(([name, req]) => `${name} = "${req}"`).join("\n")
    writeFileSync(join(root, "Cargo.toml"), `[package]\nname = "${crate.name}"\nversion = "${crate.version}"\nedition = "2021"\n\n[dependencies]\n${deps}\n`)
    writeFileSync(join(root, "src", "lib.rs"), crate.lib ?? "")
    await run("tar", ["-czf", join(dir, "crate.tgz"), "-C", dir, `${crate.name}-${crate.version}`])
    return await readFile(join(dir, "crate.tgz"))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const indexLine = (crate: CrateVersion, cksum: string) =>
  JSON.stringify({
    name: crate.name,
    vers: crate.version,
    deps: Object.entries(crate.deps ?? {}).map(([name, req]) => ({
      name,
      req,
      features: [],
      optional: false,
      default_features: true,
      target: null,
      kind: "normal"
    })),
    cksum,
    features: {},
    yanked: false,
    v: 2
  })

/**
 * Serves the registry: `config.json` and index files under `prefix` on `index`, crates under
 * /api/v1/crates/ on `downloads`. `tamper` names crates served with bytes that do not match their
 * cksum. Returns each crate's bytes by "<name>-<version>".
 */
export const serveRegistry = async (
  index: Upstream,
  prefix: string,
  downloads: Upstream,
  crates: ReadonlyArray<CrateVersion>,
  tamper: ReadonlyArray<string> = []
): Promise<Map<string, Buffer>> => {
  index.routes.set(`${prefix}/config.json`, {
    body: JSON.stringify({ dl: `${downloads.url}/api/v1/crates`, api: downloads.url }),
    headers: { "content-type": "application/json", etag: '"config-1"' }
  })
  const lines = new Map<string, Array<string>>()
  const archives = new Map<string, Buffer>()
  for (const crate of crates) {
    const bytes = await packageCrate(crate)
    const cksum = createHash("sha256").update(bytes).digest("hex")
    archives.set(`${crate.name}-${crate.version}`, bytes)
    lines.set(crate.name, [...(lines.get(crate.name) ?? []), indexLine(crate, cksum)])
    const served = tamper.includes(crate.name) ? Buffer.concat([bytes, Buffer.from("tampered")]) : bytes
    downloads.routes.set(`/api/v1/crates/${crate.name}/${crate.version}/download`, { body: served, headers: { "content-type": "application/gzip" } })
  }
  for (const [name, entries] of lines) {
    const body = entries.join("\n") + "\n"
    index.routes.set(`${prefix}/${indexPath(name)}`, {
      body,
      headers: { "content-type": "text/plain", etag: `"${createHash("sha256").update(body).digest("hex").slice(0, 16)}"` }
    })
  }
  return archives
}

/** the real cargo in `project` with its own CARGO_HOME, HOME and target dir below `scratch` */
export const runCargo = (args: ReadonlyArray<string>, options: { readonly project: string; readonly home: string; readonly scratch: string }) =>
  promisify(execFile)("cargo", [...args], {
    cwd: options.project,
    timeout: 180_000,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: join(options.scratch, "home"),
      CARGO_HOME: options.home,
      CARGO_TARGET_DIR: join(options.scratch, "target"),
      RUSTUP_HOME: process.env.RUSTUP_HOME ?? join(process.env.HOME ?? "/root", ".rustup"),
      CARGO_TERM_COLOR: "never",
      CARGO_NET_RETRY: "0"
    }
  })
