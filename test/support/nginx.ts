// Runs the Debian nginx in the foreground with a generated config, entirely inside its own prefix
// directory (config, pid, logs, temp paths), so the system nginx and its files are never touched.
// The benchmarks' proxy_cache peer and the gate's auth_request tests both start it this way.
import { spawn, type ChildProcess } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { processTree } from "../../bench/memory.ts"
import { freePort } from "./ports.ts"

export interface RunningNginx {
  readonly url: string
  readonly pid: number
  readonly prefixDir: string
  readonly errorLog: () => string
  readonly stop: () => Promise<void>
}

const waitForPort = async (port: number, child: ChildProcess, errorLog: () => string): Promise<void> => {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}:\n${errorLog()}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1")
      socket.once("connect", () => (socket.destroy(), resolve(true)))
      socket.once("error", () => resolve(false))
    })
    if (open) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`nginx did not listen on ${port} within 10 s:\n${errorLog()}`)
}

/** Starts nginx in the foreground (we own the master's PID) with the config `config` writes. */
export const startNginxWith = async (options: {
  readonly binary: string
  readonly config: (prefixDir: string, port: number) => string
}): Promise<RunningNginx> => {
  const prefixDir = mkdtempSync(join(tmpdir(), "larder-nginx-"))
  for (const sub of ["temp", "cache"]) mkdirSync(join(prefixDir, sub))
  const port = await freePort()
  const configFile = join(prefixDir, "nginx.conf")
  writeFileSync(configFile, options.config(prefixDir, port))
  const errorLogFile = join(prefixDir, "error.log")
  const errorLog = () => {
    try {
      return readFileSync(errorLogFile, "utf8")
    } catch {
      return ""
    }
  }
  // -e: the error log nginx opens before it has read the config, otherwise /var/log/nginx
  const child = spawn(options.binary, ["-p", prefixDir, "-c", configFile, "-e", errorLogFile, "-g", "daemon off;"], {
    stdio: ["ignore", "inherit", "inherit"]
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const pid = child.pid!
  const stop = async () => {
    const workers = processTree(pid).filter((p) => p !== pid)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    const timedOut = await Promise.race([exited.then(() => false), new Promise((r) => setTimeout(() => r(true), 5000))])
    if (timedOut) {
      for (const worker of workers) {
        try {
          process.kill(worker, "SIGKILL")
        } catch {
          // already gone
        }
      }
      child.kill("SIGKILL")
      await exited
    }
    rmSync(prefixDir, { recursive: true, force: true })
  }
  try {
    await waitForPort(port, child, errorLog)
  } catch (error) {
    await stop()
    throw error
  }
  return { url: `http://127.0.0.1:${port}`, pid, prefixDir, errorLog, stop }
}
