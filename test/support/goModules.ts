// A GOPROXY-protocol fixture: modules with versions, served from a counting upstream as the go
// command expects them (list, .info, .mod, .zip with the <module>@<version>/ layout).
import { execFile } from "node:child_process"
import { readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { tempDir } from "./appliance.ts"
import type { Upstream } from "./upstream.ts"

const run = promisify(execFile)

/** the proxy protocol's case encoding: upper-case letters become "!" and the lower-case letter */
export const encodeCase = (text: string) => text.replace(/[A-Z]/g, (c) => "!" + c.toLowerCase())

export interface ModuleVersion {
  readonly module: string
  readonly version: string
  /** file path (relative to the module root) -> content; go.mod is required */
  readonly files: Record<string, string>
}

/** a module zip as the go command builds it: every file under <module>@<version>/ */
export const moduleZip = async (entry: ModuleVersion): Promise<Buffer> => {
  const dir = tempDir("larder-gomod-")
  try {
    const manifest = join(dir, "files.json")
    const prefix = `${entry.module}@${entry.version}/`
    await writeFile(manifest, JSON.stringify(Object.entries(entry.files).map(([name, content]) => [prefix + name, content])))
    const zip = join(dir, "module.zip")
    const script = "import json,sys,zipfile\n" +
      "z=zipfile.ZipFile(sys.argv[2],'w',zipfile.ZIP_DEFLATED)\n" +
      "[z.writestr(n,c) for n,c in json.load(open(sys.argv[1]))]\nz.close()\n"
    await run("python3", ["-c", script, manifest, zip])
    return await readFile(zip)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** registers every version's list/info/mod/zip on the upstream under `prefix`, each with an ETag */
export const serveModules = async (upstream: Upstream, prefix: string, versions: ReadonlyArray<ModuleVersion>) => {
  const byModule = new Map<string, Array<string>>()
  for (const entry of versions) {
    const base = `${prefix}/${encodeCase(entry.module)}/@v/${encodeCase(entry.version)}`
    const info = JSON.stringify({ Version: entry.version, Time: "2026-01-01T00:00:00Z" })
    upstream.routes.set(`${base}.info`, { body: info, headers: { "content-type": "application/json", etag: `"i-${entry.version}"` } })
    upstream.routes.set(`${base}.mod`, { body: entry.files["go.mod"], headers: { "content-type": "text/plain", etag: `"m-${entry.version}"` } })
    upstream.routes.set(`${base}.zip`, { body: await moduleZip(entry), headers: { "content-type": "application/zip" } })
    byModule.set(entry.module, [...(byModule.get(entry.module) ?? []), entry.version])
  }
  for (const [module, list] of byModule) {
    upstream.routes.set(`${prefix}/${encodeCase(module)}/@v/list`, {
      body: list.join("\n") + "\n",
      headers: { "content-type": "text/plain", etag: `"l-${list.length}"` }
    })
  }
}
