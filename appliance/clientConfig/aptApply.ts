// `larder client-config apt --apply|--revert --root DIR`: writes etc/apt/sources.list.d/larder.sources
// under DIR and renames the files it replaces to <name>.disabled; --revert renames them back and
// removes larder.sources. Both are idempotent, and apply then revert leaves DIR as it was.
import { existsSync, promises as fs } from "node:fs"
import { join } from "node:path"
import type { LanHost } from "./lanHost.ts"
import { ClientConfigError } from "./lanHost.ts"
import { type AptSourcesFile, disabledBy, isSourcesPath, larderSourcesPath, renderLarderSources, writtenBy } from "./aptSources.ts"

const aptDir = (root: string) => join(root, "etc/apt")

const readIfExists = (path: string) => fs.readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
  if (error.code === "ENOENT") return undefined
  throw error
})

/** the larder.sources an earlier --apply wrote, or undefined; refuses a file of that name larder did not write */
const readOurs = async (root: string): Promise<string | undefined> => {
  const path = join(aptDir(root), larderSourcesPath)
  const text = await readIfExists(path)
  if (text !== undefined && !text.startsWith(writtenBy)) {
    throw new ClientConfigError(`${path} exists and was not written by larder; move it away first`)
  }
  return text
}

/** the client's sources in apt's order; a file an earlier --apply disabled is read from <name>.disabled */
export const readAptSourcesFiles = async (root: string, disabled: ReadonlyArray<string> = []): Promise<ReadonlyArray<AptSourcesFile>> => {
  const dir = aptDir(root)
  const names = await fs.readdir(join(dir, "sources.list.d")).catch(() => [] as Array<string>)
  const paths = ["sources.list", ...names.sort().map((name) => `sources.list.d/${name}`)].filter(isSourcesPath)
  for (const path of disabled) if (!paths.includes(path)) paths.push(path)
  const files: Array<AptSourcesFile> = []
  for (const path of paths) {
    const text = (await readIfExists(join(dir, path))) ?? (disabled.includes(path) ? await readIfExists(join(dir, path + ".disabled")) : undefined)
    if (text !== undefined) files.push({ path, text })
  }
  // apt's reading order, also for files only present as .disabled
  return files.sort((a, b) => (a.path === "sources.list" ? -1 : b.path === "sources.list" ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/** writes larder.sources and disables the files it replaces; returns what it did, one line each */
export const applyAptSources = async (root: string, lan: LanHost): Promise<ReadonlyArray<string>> => {
  const dir = aptDir(root)
  const previous = await readOurs(root)
  const files = await readAptSourcesFiles(root, previous === undefined ? [] : disabledBy(previous))
  const { text, disable } = renderLarderSources(files, lan)
  for (const path of disable) {
    if (existsSync(join(dir, path)) && existsSync(join(dir, path + ".disabled"))) {
      throw new ClientConfigError(`both ${join(dir, path)} and ${path}.disabled exist; remove one, then run this again`)
    }
  }
  const done: Array<string> = []
  const target = join(dir, larderSourcesPath)
  if (previous !== text) {
    // written before anything is renamed: a crash in between leaves the renames recorded for --revert
    await fs.mkdir(join(dir, "sources.list.d"), { recursive: true })
    await fs.writeFile(target + ".tmp", text, { mode: 0o644 })
    await fs.rename(target + ".tmp", target)
    done.push(`wrote ${target}`)
  }
  for (const path of disable) {
    if (!existsSync(join(dir, path))) continue
    await fs.rename(join(dir, path), join(dir, path + ".disabled"))
    done.push(`renamed ${join(dir, path)} to ${path.split("/").at(-1)}.disabled`)
  }
  return done.length === 0 ? [`unchanged: ${target} already points at ${lan.baseUrl}`] : done
}

/** renames back what --apply disabled and removes larder.sources */
export const revertAptSources = async (root: string): Promise<ReadonlyArray<string>> => {
  const dir = aptDir(root)
  const target = join(dir, larderSourcesPath)
  const ours = await readOurs(root)
  if (ours === undefined) return [`nothing to revert: no ${target}`]
  const disabled = disabledBy(ours)
  for (const path of disabled) {
    if (existsSync(join(dir, path)) && existsSync(join(dir, path + ".disabled"))) {
      throw new ClientConfigError(`both ${join(dir, path)} and ${path}.disabled exist; remove one, then run this again`)
    }
  }
  const done: Array<string> = []
  for (const path of disabled) {
    if (!existsSync(join(dir, path + ".disabled"))) continue
    await fs.rename(join(dir, path + ".disabled"), join(dir, path))
    done.push(`renamed ${join(dir, path)}.disabled back`)
  }
  await fs.rm(target)
  done.push(`removed ${target}`)
  return done
}
