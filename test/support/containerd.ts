// A private containerd for the image-proxy tests: Debian's containerd (1.6) started with its own
// config, root, state and sockets inside a temp dir, so nothing under /run/containerd,
// /var/lib/containerd or /opt/containerd is touched. Only what a pull needs is loaded: the CRI
// plugin (it wants CNI and kernel features) and the snapshotters that need special filesystems or
// /opt are disabled. `ctr` drives it through the private socket; with ctr 1.6 the registry
// resolver runs in the ctr process, so the hosts directory and `--debug` output belong to ctr.
import { execFile, spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const containerdBinary = "containerd"
export const ctrBinary = "ctr"

export interface CtrOptions {
  /** containerd namespace; default "default" */
  readonly namespace?: string
  /** passes ctr's global --debug (the resolver's "do request" lines go to stderr) */
  readonly debug?: boolean
  /** default 60 s; the process is killed after it */
  readonly timeoutMs?: number
}

export interface CtrResult {
  readonly stdout: string
  readonly stderr: string
}

export interface Containerd {
  readonly dir: string
  /** the gRPC socket */
  readonly address: string
  readonly process: ChildProcess
  /** runs `ctr --address <socket> [--namespace ns] [--debug] args…`; rejects with its stderr on failure */
  readonly ctr: (args: ReadonlyArray<string>, options?: CtrOptions) => Promise<CtrResult>
  /** containerd's log so far */
  readonly output: () => string
  readonly stop: () => Promise<void>
}

export interface ContainerdOptions {
  /** default 20 s */
  readonly startTimeoutMs?: number
  /** containerd's log level; default "info" */
  readonly logLevel?: "debug" | "info" | "warn" | "error"
}

const disabledPlugins = [
  "io.containerd.grpc.v1.cri",
  // keeps its files in /opt/containerd
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper"
]

const config = (dir: string, logLevel: string) =>
  [
    "version = 2",
    `root = ${JSON.stringify(join(dir, "root"))}`,
    `state = ${JSON.stringify(join(dir, "state"))}`,
    `disabled_plugins = ${JSON.stringify(disabledPlugins)}`,
    "[grpc]",
    `  address = ${JSON.stringify(join(dir, "containerd.sock"))}`,
    "[ttrpc]",
    `  address = ${JSON.stringify(join(dir, "containerd.sock.ttrpc"))}`,
    "[debug]",
    '  address = ""',
    `  level = ${JSON.stringify(logLevel)}`,
    "[metrics]",
    '  address = ""',
    ""
  ].join("\n")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const run = (argv: ReadonlyArray<string>, timeoutMs: number): Promise<CtrResult> =>
  new Promise((resolve, reject) => {
    // a minimal environment: no CONTAINERD_* / proxy variables from the host leak in
    const env = { PATH: process.env.PATH, HOME: process.env.HOME }
    execFile(ctrBinary, argv, { env, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null) {
        const reason = error.killed ? `killed after ${timeoutMs} ms` : `exit ${error.code}`
        reject(new Error(`ctr ${argv.join(" ")}: ${reason}\n${stderr}`))
      } else resolve({ stdout, stderr })
    })
  })

/** Starts containerd in a fresh temp dir and waits until `ctr version` answers on its socket. */
export const startContainerd = async (options: ContainerdOptions = {}): Promise<Containerd> => {
  const dir = mkdtempSync(join(tmpdir(), "larder-containerd-"))
  const address = join(dir, "containerd.sock")
  const configFile = join(dir, "config.toml")
  await writeFile(configFile, config(dir, options.logLevel ?? "info"))
  const child = spawn(containerdBinary, ["--config", configFile], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: process.env.PATH }
  })
  let output = ""
  child.stderr!.on("data", (chunk: Buffer) => {
    if (output.length < 2_000_000) output += chunk
  })
  child.once("error", (error) => (output += `\nspawn ${containerdBinary}: ${error.message}`))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  let running = true
  void exited.then(() => (running = false))

  const ctr = (args: ReadonlyArray<string>, ctrOptions: CtrOptions = {}) =>
    run(
      [
        "--address",
        address,
        "--namespace",
        ctrOptions.namespace ?? "default",
        ...(ctrOptions.debug ? ["--debug"] : []),
        ...args
      ],
      ctrOptions.timeoutMs ?? 60_000
    )

  const stop = async () => {
    if (running) {
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
      await exited
      clearTimeout(timer)
    }
    await rm(dir, { recursive: true, force: true })
  }

  const deadline = Date.now() + (options.startTimeoutMs ?? 20_000)
  let lastError = ""
  while (running && Date.now() < deadline) {
    try {
      await run(["--address", address, "--connect-timeout", "1s", "version"], 5_000)
      return { dir, address, process: child, ctr, output: () => output, stop }
    } catch (error) {
      lastError = (error as Error).message
      await sleep(100)
    }
  }
  const wasRunning = running
  await stop()
  throw new Error(
    `containerd ${wasRunning ? "did not answer on its socket in time" : "exited before it was ready"}:\n${output}\nlast ctr error: ${lastError}`
  )
}
