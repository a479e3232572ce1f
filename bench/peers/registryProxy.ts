// Debian's docker-registry (distribution 2.8) as a pull-through cache: a second registry process
// with `proxy: { remoteurl }` in its own config.yml and its own storage dir (a temp dir made by
// test/support/registry.ts). Clients talk to it directly (directUrl), not through the counting
// proxy startRegistry also puts in front of it.
import { startRegistry } from "../../test/support/registry.ts"
import type { Peer } from "./peer.ts"

/** remoteUrl: the origin registry (here: the origin's counting proxy). urlFor ignores the
 * repository name: a proxy registry serves one upstream at /v2/… */
export const startRegistryProxy = async (remoteUrl: string): Promise<Peer> => {
  const registry = await startRegistry({
    configure: (config) => {
      config.proxy = { remoteurl: remoteUrl }
    }
  })
  return {
    name: "registry",
    urlFor: (_repository, path) => `${registry.directUrl}/${path}`,
    pid: registry.process.pid!,
    stop: registry.stop
  }
}
