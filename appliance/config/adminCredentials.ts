// Admin credentials for REST and metrics: a secret directory with files `username` and `password`,
// or LARDER_ADMIN_USERNAME/LARDER_ADMIN_PASSWORD, or a random password generated once.
import { randomBytes } from "node:crypto"
import { existsSync, promises as fs } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { ConfigError } from "./loadRepositories.ts"

export interface AdminCredentials {
  readonly username: string
  readonly password: string
  /** where they came from, for the start-up log */
  readonly source: string
}

export const loadAdminCredentials = (options: {
  readonly secretDir: string | undefined
  readonly env: NodeJS.ProcessEnv
  readonly dataDir: string
}) =>
  Effect.gen(function*() {
    const { secretDir, env, dataDir } = options
    if (secretDir !== undefined) {
      const found = yield* Effect.tryPromise({
        try: () => fs.readdir(secretDir),
        catch: () =>
          new ConfigError({ message: `admin secret directory ${secretDir} cannot be read; it must hold files "username" and "password"` })
      })
      const visible = found.filter((name) => !name.startsWith(".."))
      if (!visible.includes("username") || !visible.includes("password")) {
        // A secret with other key names makes every scrape fail authentication without another
        // sign; say so at start instead.
        return yield* new ConfigError({
          message: `admin secret directory ${secretDir} must hold files "username" and "password"; found: ${
            visible.length === 0 ? "(nothing)" : visible.map((name) => `"${name}"`).join(", ")
          }`
        })
      }
      const read = (name: string) => Effect.promise(() => fs.readFile(join(secretDir, name), "utf8").then((s) => s.trim()))
      return { username: yield* read("username"), password: yield* read("password"), source: `secret directory ${secretDir}` }
    }
    // an empty variable counts as unset
    const username = env.LARDER_ADMIN_USERNAME || undefined
    const password = env.LARDER_ADMIN_PASSWORD || undefined
    if (username !== undefined || password !== undefined) {
      if (username === undefined || password === undefined) {
        return yield* new ConfigError({ message: "set both LARDER_ADMIN_USERNAME and LARDER_ADMIN_PASSWORD, or neither" })
      }
      return { username, password, source: "environment" }
    }
    const file = join(dataDir, "admin.password")
    if (existsSync(file)) {
      const stored = yield* Effect.promise(() => fs.readFile(file, "utf8").then((s) => s.trim()))
      return { username: "admin", password: stored, source: `${file}` }
    }
    const generated = randomBytes(18).toString("base64url")
    yield* Effect.promise(() => fs.writeFile(file, generated + "\n", { mode: 0o600, flag: "wx" }))
    yield* Effect.logWarning(`generated admin password for user "admin": ${generated} (stored in ${file}, mode 0600)`)
    return { username: "admin", password: generated, source: `generated into ${file}` }
  })
