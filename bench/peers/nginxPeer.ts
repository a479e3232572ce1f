// nginx proxy_cache laid out like larder's raw repositories (/repository/<name>/<path>), so
// both peers are asked for the same URLs.
import { startNginx } from "./nginx.ts"
import type { Peer } from "./peer.ts"

/** repositories: name → origin URL (http://127.0.0.1:port/) */
export const startNginxPeer = async (binary: string, repositories: Record<string, string>, cacheLockTimeout: string): Promise<Peer> => {
  const nginx = await startNginx({
    binary,
    cacheLockTimeout,
    locations: Object.entries(repositories).map(([name, url]) => {
      const { host, pathname } = new URL(url)
      return { prefix: `/repository/${name}/`, upstream: host, upstreamPath: pathname }
    })
  })
  return {
    name: "nginx",
    urlFor: (repository, path) => `${nginx.url}/repository/${repository}/${path}`,
    pid: nginx.pid,
    stop: nginx.stop
  }
}
