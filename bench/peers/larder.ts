// larder itself, started the way the end-to-end tests start it, with raw proxy repositories.
import { startAppliance } from "../../test/support/appliance.ts"
import type { Peer } from "./peer.ts"

export const rawProxyRepository = (name: string, remoteUrl: string) => ({
  name,
  format: "raw",
  online: true,
  proxy: { remoteUrl, contentMaxAge: 1440, metadataMaxAge: 1440 },
  negativeCache: { enabled: true, timeToLive: 1440 }
})

export const dockerProxyRepository = (name: string, remoteUrl: string) => ({
  name,
  format: "docker",
  online: true,
  proxy: { remoteUrl, contentMaxAge: 1440, metadataMaxAge: 1440 },
  negativeCache: { enabled: true, timeToLive: 1440 }
})

const isList = (value: Record<string, string> | ReadonlyArray<unknown>): value is ReadonlyArray<unknown> => Array.isArray(value)

/** repositories: name → origin URL (with trailing slash), or repository objects as they are */
export const startLarder = async (repositories: Record<string, string> | ReadonlyArray<unknown>): Promise<Peer> => {
  const appliance = await startAppliance({
    repositories: isList(repositories)
      ? repositories
      : Object.entries(repositories).map(([name, url]) => rawProxyRepository(name, url))
  })
  return {
    name: "larder",
    urlFor: (repository, path) => `${appliance.lanUrl}/repository/${repository}/${path}`,
    pid: appliance.process.pid!,
    stop: appliance.stop
  }
}
