// Package proxies against their usual peers, each in front of the same local fixture upstream:
// npm-proxy vs verdaccio (cache-hit requests/s for a packument and a tarball), and apt-distro vs
// apt-cacher-ng (apt-get update + downloading 50 packages, cold and warm). The peers are installed
// into temp dirs at run time, never added to the project.
import { execFile, spawn, type ChildProcess } from "node:child_process"
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { promisify } from "node:util"
import { buildArchive, makeSigningKey, serveArchive } from "../test/support/aptArchive.ts"
import { makeAptClient } from "../test/support/aptClient.ts"
import { tempDir } from "../test/support/appliance.ts"
import { servePackages } from "../test/support/npmRegistry.ts"
import { freePort } from "../test/support/ports.ts"
import { startUpstream, type Upstream } from "../test/support/upstream.ts"
import { wrkRate } from "./load.ts"
import { startLarder } from "./peers/larder.ts"
import type { Peer } from "./peers/peer.ts"
import { waitForQuiet } from "./quiet.ts"
import { fixed, isValue, ratioOf, show, times, type Figure, type Row } from "./report.ts"

/** measurements start on a nearly idle machine (as in run.ts); a busy one is noted */
const quietly = async (what: string, notes: Array<string>) => {
  const machine = await waitForQuiet({ maxBusy: 0.15, maxWaitSeconds: 20 })
  if (!machine.quiet) notes.push(`${what}: the machine stayed ${(machine.busy * 100).toFixed(0)}% busy (${machine.busiest})`)
}

const run = promisify(execFile)

export const settings = {
  hitRate: { connections: 32, seconds: 10 },
  npmVersions: 40,
  aptPackages: 50,
  aptPayloadBytes: 200 * 1024
} as const

const waitForHttp = async (url: string, child: ChildProcess, seconds = 60) => {
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before answering`)
    const ok = await fetch(url).then((r) => r.status < 500, () => false)
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`no answer from ${url} in ${seconds} s`)
}

const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
    setTimeout(() => child.kill("SIGKILL"), 5000).unref()
  })

/**
 * verdaccio from the npm registry, in a temp dir. The override works around a dependency that
 * asks for node-fetch by a dist-tag ("cjs") this machine's registry does not carry.
 */
const startVerdaccio = async (uplink: string): Promise<Peer> => {
  const dir = tempDir("larder-bench-verdaccio-")
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "bench-verdaccio", private: true, dependencies: { verdaccio: "6.10.4" }, overrides: { "node-fetch": "2.7.0" } }))
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, timeout: 300_000 })
  const port = await freePort()
  writeFileSync(join(dir, "config.yaml"), [
    `storage: ${join(dir, "storage")}`,
    "uplinks:",
    "  fixture:",
    `    url: ${uplink}`,
    "    maxage: 60m",
    "packages:",
    "  '**':",
    "    access: $all",
    "    proxy: fixture",
    "log: { type: stdout, format: pretty, level: error }",
    ""
  ].join("\n"))
  const child = spawn(process.execPath, [join(dir, "node_modules/verdaccio/bin/verdaccio"), "--config", join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`], {
    stdio: "ignore",
    env: { ...process.env, HOME: dir }
  })
  await waitForHttp(`http://127.0.0.1:${port}/-/ping`, child)
  return {
    name: "verdaccio",
    urlFor: (_repository, path) => `http://127.0.0.1:${port}/${path}`,
    pid: child.pid!,
    stop: async () => {
      await stopChild(child)
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

const corgi = { accept: "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*" }

interface NpmFigures {
  packument: Figure<number>
  tarball: Figure<number>
}

const measureNpm = async (wrk: string, peer: Peer, log: (text: string) => void): Promise<NpmFigures> => {
  const packument = peer.urlFor("npm-proxy", "bench-lib")
  const tarball = peer.urlFor("npm-proxy", "bench-lib/-/bench-lib-1.0.39.tgz")
  // one request each fills the cache (and the packument names the tarball's link)
  for (const url of [packument, tarball]) {
    const response = await fetch(url, { headers: corgi })
    if (response.status !== 200) throw new Error(`${peer.name}: ${url} answered ${response.status}`)
    await response.arrayBuffer()
  }
  const rate = async (url: string) => {
    const result = await wrkRate({ wrk, url, ...settings.hitRate, headers: corgi })
    if (result.non2xx > 0 || result.socketErrors > 0) throw new Error(`${result.non2xx} non-2xx, ${result.socketErrors} socket errors`)
    return result.requestsPerSecond
  }
  const figures: NpmFigures = {
    packument: await rate(packument).catch((error: Error) => error),
    tarball: await rate(tarball).catch((error: Error) => error)
  }
  log(`${peer.name}: packument ${show(figures.packument, fixed(0))} req/s, tarball ${show(figures.tarball, fixed(0))} req/s`)
  return figures
}

export const npmRows = async (wrk: string, log: (text: string) => void, notes: Array<string>): Promise<Row[]> => {
  const upstream = await startUpstream()
  try {
    await servePackages(upstream, Array.from({ length: settings.npmVersions }, (_, i) => ({ name: "bench-lib", version: `1.0.${i}` })))
    const figures = new Map<string, NpmFigures | Error>()
    for (const [name, start] of [
      ["larder", () => startLarder([{ name: "npm-proxy", format: "npm", proxy: { remoteUrl: upstream.url + "/", metadataMaxAge: 1440 } }])],
      ["verdaccio", () => startVerdaccio(upstream.url + "/")]
    ] as const) {
      log(`npm: starting ${name}`)
      const peer = await start().catch((error: Error) => error)
      if (peer instanceof Error) {
        figures.set(name, peer)
        notes.push(`${name} did not start: ${peer.message.slice(0, 500)}`)
        continue
      }
      try {
        await quietly(`npm ${name}`, notes)
        figures.set(name, await measureNpm(wrk, peer, log).catch((error: Error) => error))
      } finally {
        await peer.stop()
      }
    }
    const larder = figures.get("larder")
    const verdaccio = figures.get("verdaccio")
    const row = (measure: string, pick: (f: NpmFigures) => Figure<number>): Row => {
      const l = larder instanceof Error || larder === undefined ? larder : pick(larder)
      const v = verdaccio instanceof Error || verdaccio === undefined ? verdaccio : pick(verdaccio)
      const ratio = ratioOf(l, v)
      return { measure, larder: show(l, fixed(0)), reference: show(v, fixed(0)), ratio: times(ratio), target: "≥ 3.00× verdaccio", met: ratio === undefined ? undefined : ratio >= 3 }
    }
    const load = `wrk -c${settings.hitRate.connections} ${settings.hitRate.seconds} s, npm install's Accept`
    return [
      row(`npm packument cache hit (${settings.npmVersions} versions), req/s (${load})`, (f) => f.packument),
      row(`npm tarball cache hit, req/s (${load})`, (f) => f.tarball)
    ]
  } finally {
    await upstream.close()
  }
}

/** apt-cacher-ng from Debian's package, run as a private foreground process with its own cache */
const startAptCacherNg = async (dir: string, upstreamPort: number): Promise<{ proxy: string; stop: () => Promise<void> }> => {
  const port = await freePort()
  mkdirSync(join(dir, "conf"), { recursive: true })
  writeFileSync(join(dir, "conf", "acng.conf"), `Port: ${port}\nBindAddress: 127.0.0.1\n`)
  let output = ""
  const child = spawn("apt-cacher-ng", [
    "-c", join(dir, "conf"), "ForeGround=1", `CacheDir=${join(dir, "cache")}`, `LogDir=${join(dir, "log")}`,
    `SocketPath=${join(dir, "socket")}`, "SupportDir=/usr/lib/apt-cacher-ng", `AllowUserPorts=${upstreamPort}`
  ], { stdio: ["ignore", "pipe", "pipe"] })
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  child.on("error", (error) => (output += String(error)))
  try {
    await waitForHttp(`http://127.0.0.1:${port}/acng-report.html`, child, 20)
  } catch (error) {
    await stopChild(child)
    throw new Error(`${(error as Error).message}: ${output.trim()}`)
  }
  return { proxy: `http://127.0.0.1:${port}`, stop: () => stopChild(child) }
}

interface AptRun {
  seconds: number
  upstreamRequests: number
}

export const aptRows = async (log: (text: string) => void, notes: Array<string>): Promise<Row[]> => {
  const scratch = tempDir("larder-bench-apt-")
  const upstream: Upstream = await startUpstream()
  try {
    log(`apt: building an archive of ${settings.aptPackages} packages`)
    const key = await makeSigningKey(scratch)
    const names = Array.from({ length: settings.aptPackages }, (_, i) => `bench-pkg${i}`)
    const archive = await buildArchive(key, names.map((name) => ({ name, version: "1.0", payloadBytes: settings.aptPayloadBytes })), "stable")
    serveArchive(upstream, "/debian", archive)

    /** apt-get update + install --download-only of every package, from fresh client state */
    const clientRun = async (label: string, uri: string, options: ReadonlyArray<string> = []): Promise<AptRun> => {
      const client = makeAptClient(join(scratch, label), [{ uri, suite: "stable", keyring: key.keyring }])
      await quietly(`apt ${label}`, notes)
      const before = upstream.requests.length
      const started = performance.now()
      await client.aptGet(["update"], options)
      await client.aptGet(["install", "--download-only", "-y", ...names], options)
      const seconds = (performance.now() - started) / 1000
      const got = readdirSync(client.archives).filter((name) => name.endsWith(".deb")).length
      if (got !== names.length) throw new Error(`${label}: ${got} of ${names.length} packages downloaded`)
      return { seconds, upstreamRequests: upstream.requests.length - before }
    }

    const results = new Map<string, { cold: AptRun | Error; warm: AptRun | Error } | Error>()
    log("apt: larder")
    const larder = await startLarder([{ name: "apt-distro", format: "apt", proxy: { remoteUrl: upstream.url + "/debian/", metadataMaxAge: 1440 } }]).catch((error: Error) => error)
    if (larder instanceof Error) results.set("larder", larder)
    else {
      try {
        const uri = larder.urlFor("apt-distro", "")
        const cold = await clientRun("larder-cold", uri).catch((error: Error) => error)
        const warm = await clientRun("larder-warm", uri).catch((error: Error) => error)
        results.set("larder", { cold, warm })
      } finally {
        await larder.stop()
      }
    }
    log("apt: apt-cacher-ng")
    const acng = await startAptCacherNg(join(scratch, "acng"), upstream.port).catch((error: Error) => error)
    if (acng instanceof Error) {
      results.set("apt-cacher-ng", acng)
      notes.push(`apt-cacher-ng did not start: ${acng.message.slice(0, 300)}`)
    } else {
      try {
        const proxy = [`Acquire::http::Proxy=${acng.proxy}`]
        const uri = `${upstream.url}/debian/`
        const cold = await clientRun("acng-cold", uri, proxy).catch((error: Error) => error)
        const warm = await clientRun("acng-warm", uri, proxy).catch((error: Error) => error)
        results.set("apt-cacher-ng", { cold, warm })
      } finally {
        await acng.stop()
      }
    }
    const pick = (peer: string, which: "cold" | "warm"): Figure<AptRun> => {
      const result = results.get(peer)
      return result === undefined || result instanceof Error ? result : result[which]
    }
    const rows: Row[] = []
    for (const which of ["cold", "warm"] as const) {
      const l = pick("larder", which)
      const a = pick("apt-cacher-ng", which)
      const format = (r: AptRun) => `${r.seconds.toFixed(2)} s, ${r.upstreamRequests} upstream requests`
      const ratio = isValue(l) && isValue(a) ? l.seconds / a.seconds : undefined
      rows.push({
        measure: `apt-get update + ${settings.aptPackages} packages (${settings.aptPayloadBytes / 1024} KiB each), ${which} cache, fresh client`,
        larder: show(l, format),
        reference: show(a, format),
        ratio: ratio === undefined ? "—" : `${ratio.toFixed(2)}× (time)`,
        target: "compare (no target)",
        met: undefined
      })
    }
    return rows
  } finally {
    await upstream.close()
    rmSync(scratch, { recursive: true, force: true })
  }
}

export const method = (): string[] => [
  "npm: one fixture upstream serving a packument with " + settings.npmVersions + " versions and their tarballs; larder's npm-proxy and verdaccio 6 (uplink = the fixture, maxage 60 m, installed from the npm registry into a temp dir) each filled by one GET, then wrk with npm install's Accept header on the packument and on one tarball.",
  `apt: a signed fixture archive of ${settings.aptPackages} packages; the real apt-get with private state runs update + install --download-only of all of them, from a fresh client each time, first with the proxy's cache empty (cold) then filled (warm). larder is the apt source; apt-cacher-ng is used the way it is deployed, as apt's HTTP proxy (Acquire::http::Proxy) for the fixture's URL.`
]
