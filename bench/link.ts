// A rate-limited TCP link in front of an origin, standing in for the WAN between a cache and
// a real registry. One shared budget for all connections: a cache that fails to coalesce
// splits the link between its fetches, as it would on a real uplink.
import { connect, createServer, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import { performance } from "node:perf_hooks"

export interface Link {
  readonly url: string
  readonly port: number
  readonly close: () => Promise<void>
}

export const startLink = async (options: { readonly targetPort: number; readonly bytesPerSecond: number }): Promise<Link> => {
  const sockets = new Set<Socket>()
  let scheduledUntil = performance.now() // when the link has finished sending everything queued so far
  const server = createServer((client) => {
    const origin = connect(options.targetPort, "127.0.0.1")
    for (const s of [client, origin]) {
      sockets.add(s)
      s.once("close", () => sockets.delete(s))
      s.once("error", () => (client.destroy(), origin.destroy()))
    }
    client.pipe(origin) // requests go up unthrottled
    origin.on("data", (chunk: Buffer) => {
      const now = performance.now()
      scheduledUntil = Math.max(scheduledUntil, now) + (chunk.length / options.bytesPerSecond) * 1000
      client.write(chunk)
      const wait = scheduledUntil - now
      if (wait > 1) {
        origin.pause()
        setTimeout(() => origin.resume(), wait)
      }
    })
    origin.once("end", () => client.end())
    client.once("close", () => origin.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}
