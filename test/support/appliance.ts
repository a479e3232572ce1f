// Starts the real appliance process (node appliance/main.ts) on random ports with its own data
// directory, for end-to-end tests and benchmarks.
import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = new URL("../../", import.meta.url).pathname

export interface ApplianceOptions {
  readonly dataDir?: string
  /** repository objects in the Nexus REST shape; written to a file and passed with --repositories */
  readonly repositories?: ReadonlyArray<unknown>
  readonly args?: ReadonlyArray<string>
  readonly env?: Record<string, string>
  readonly username?: string
  readonly password?: string
  /** a fixed web port (when URLs such as the IdP's issuer must be known before start); default: any free port */
  readonly webPort?: number
}

export interface Appliance {
  readonly lanUrl: string
  readonly webUrl: string
  readonly dataDir: string
  readonly process: ChildProcess
  readonly username: string
  readonly password: string
  readonly auth: string
  readonly output: () => string
  readonly stop: () => Promise<void>
  readonly kill9: () => Promise<void>
}

export const tempDir = (prefix = "larder-test-"): string => mkdtempSync(join(tmpdir(), prefix))

export const nodeBinary = join(root, "node_modules/.bin/node")
/** as `npm start` runs it (package.json): a small young generation keeps streaming memory flat */
export const nodeFlags = ["--max-semi-space-size=1"]

/**
 * Runs the appliance (or one of its commands) to completion; resolves with the exit code, stdout,
 * stderr and both interleaved. `input` is written to its stdin.
 */
export const runAppliance = (args: ReadonlyArray<string>, env: Record<string, string> = {}, input?: string) =>
  new Promise<{ code: number | null; output: string; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(nodeBinary, [...nodeFlags, join(root, "appliance/main.ts"), ...args], {
      env: { ...process.env, ...env },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    if (input !== undefined) child.stdin!.end(input)
    let output = ""
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk) => ((output += chunk), (stdout += chunk)))
    child.stderr!.on("data", (chunk) => ((output += chunk), (stderr += chunk)))
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output, stdout, stderr })
    })
  })

export const startAppliance = async (options: ApplianceOptions = {}): Promise<Appliance> => {
  const dataDir = options.dataDir ?? tempDir()
  const username = options.username ?? "admin"
  const password = options.password ?? "test-password"
  const args = ["--data-dir", dataDir, "--lan-port", "0", "--web-port", String(options.webPort ?? 0), "--log-level", "info"]
  if (options.repositories !== undefined) {
    const file = join(tempDir("larder-repos-"), "repositories.json")
    writeFileSync(file, JSON.stringify(options.repositories))
    args.push("--repositories", file)
  }
  args.push(...(options.args ?? []))
  const child = spawn(nodeBinary, [...nodeFlags, join(root, "appliance/main.ts"), ...args], {
    env: { ...process.env, LARDER_ADMIN_USERNAME: username, LARDER_ADMIN_PASSWORD: password, ...options.env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const ready = new Promise<{ lan: string; web: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`appliance did not start in 20 s:\n${output}`)), 20_000)
    const onData = (chunk: Buffer) => {
      output += chunk
      const match = /lan=(http:\/\/\S+) web=(http:\/\/\S+)/.exec(output)
      if (match !== null) {
        clearTimeout(timer)
        resolve({ lan: match[1], web: match[2] })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`appliance exited with ${code} before it was ready:\n${output}`))
    })
  })
  const { lan, web } = await ready
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  return {
    lanUrl: lan,
    webUrl: web,
    dataDir,
    process: child,
    username,
    password,
    auth: "Basic " + Buffer.from(`${username}:${password}`).toString("base64"),
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM")
      await exited
    },
    kill9: async () => {
      if (child.exitCode === null) child.kill("SIGKILL")
      await exited
    }
  }
}
