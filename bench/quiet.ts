// The machine may be shared (test runs, builds); a benchmark started while it is busy measures
// the other load too. Wait, within a bound, until it is nearly idle, and say who was busy when
// it never was.
import { readdirSync, readFileSync } from "node:fs"

const cpuTicks = () => {
  // first line of /proc/stat: "cpu user nice system idle iowait irq softirq steal ..."
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1, 9).map(Number)
  return { idle: fields[3] + fields[4], total: fields.reduce((a, b) => a + b, 0) }
}

/** pid → [command, utime + stime in ticks] for every process */
const processTicks = () => {
  const ticks = new Map<number, [string, number]>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      ticks.set(Number(entry), [stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), Number(fields[11]) + Number(fields[12])])
    } catch {
      // exited while we looked
    }
  }
  return ticks
}

/** fraction (0–1) of all cores' time spent busy over the next `ms`, and the busiest processes */
export const machineBusy = async (ms = 1000): Promise<{ readonly busy: number; readonly busiest: string }> => {
  const a = cpuTicks()
  const before = processTicks()
  await new Promise((resolve) => setTimeout(resolve, ms))
  const b = cpuTicks()
  const busiest = [...processTicks()]
    .map(([pid, [command, ticks]]) => ({ pid, command, ticks: ticks - (before.get(pid)?.[1] ?? ticks) }))
    .filter((p) => p.ticks > 0)
    .sort((x, y) => y.ticks - x.ticks)
    .slice(0, 3)
    .map((p) => `${p.command} (pid ${p.pid}, ${p.ticks} ticks)`)
    .join(", ")
  return { busy: b.total === a.total ? 0 : 1 - (b.idle - a.idle) / (b.total - a.total), busiest: busiest || "no single process" }
}

export const waitForQuiet = async (options: { readonly maxBusy: number; readonly maxWaitSeconds: number }) => {
  let last = { busy: 1, busiest: "" }
  for (let second = 0; second < options.maxWaitSeconds; second++) {
    last = await machineBusy(1000)
    if (last.busy <= options.maxBusy) return { quiet: true, ...last }
  }
  return { quiet: false, ...last }
}
