// Resident memory of processes we started, read from /proc (Linux only).
import { readdirSync, readFileSync, writeFileSync } from "node:fs"

const statusField = (pid: number, field: "VmRSS" | "VmHWM" | "RssAnon"): number => {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0 // the process has gone
  }
}

const parentOf = (pid: number): number | undefined => {
  try {
    // the command name is in parentheses and may hold spaces; ppid is the 2nd field after it
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return undefined
  }
}

/** pid and all its descendants (nginx workers, any helpers larder spawns) */
export const processTree = (root: number): number[] => {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const parent = parentOf(Number(entry))
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), Number(entry)])
  }
  const tree: number[] = []
  const pending = [root]
  while (pending.length > 0 && tree.length < 10_000) {
    const pid = pending.pop()!
    tree.push(pid)
    pending.push(...(children.get(pid) ?? []))
  }
  return tree
}

export const rssBytes = (pid: number): number => statusField(pid, "VmRSS")
export const anonRssBytes = (pid: number): number => statusField(pid, "RssAnon")
export const peakRssBytes = (pid: number): number => statusField(pid, "VmHWM")

/** Resets VmHWM so it covers only what follows ("5" to clear_refs, Linux ≥ 4.0); false if not allowed. */
export const resetPeakRss = (pid: number): boolean => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}

export interface RssSampler {
  /** stops sampling; the largest summed VmRSS of the tree seen, and per-process VmHWM summed */
  readonly stop: () => {
    readonly sampledPeakBytes: number
    readonly sampledPeakAnonBytes: number
    readonly highWaterBytes: number
  }
}

/** Samples the summed VmRSS of root's process tree every intervalMs; resets VmHWM first. */
export const sampleRss = (root: number, intervalMs = 100): RssSampler => {
  const pids = processTree(root)
  for (const pid of pids) resetPeakRss(pid)
  let peak = 0
  let peakAnon = 0
  const sum = (read: (pid: number) => number) => pids.reduce((total, pid) => total + read(pid), 0)
  const sample = () => {
    peak = Math.max(peak, sum(rssBytes))
    peakAnon = Math.max(peakAnon, sum(anonRssBytes))
  }
  sample()
  const timer = setInterval(sample, intervalMs)
  return {
    stop: () => {
      clearInterval(timer)
      sample()
      return { sampledPeakBytes: peak, sampledPeakAnonBytes: peakAnon, highWaterBytes: sum(peakRssBytes) }
    }
  }
}
