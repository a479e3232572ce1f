// Registry mirror settings for the node container runtimes: k3s `registries.yaml` and containerd's
// `hosts.toml` per registry host. Mirrors work per registry hostname, so each docker proxy
// repository becomes the mirror of the registry host its upstream is.
import { stringify as toToml } from "smol-toml"
import { stringify as toYaml } from "yaml"
import type { Repository } from "../config/Repository.ts"
import { ClientConfigError, type LanHost } from "./lanHost.ts"

export interface RegistryMirror {
  /** the name images are pulled by: docker.io, ghcr.io, quay.io, ... */
  readonly registryHost: string
  /** the upstream registry itself, where the runtime falls back when the mirror is unreachable */
  readonly server: string
  readonly repository: string
  readonly endpoint: string
}

export const defaultEndpointTemplate = "http://{lan_host}/repository/{repository}/v2"

// Docker Hub serves registry-1.docker.io but images are named docker.io/...
const registryHostAliases: Record<string, string> = { "registry-1.docker.io": "docker.io", "index.docker.io": "docker.io" }

export const registryHostOf = (remoteUrl: string): string => {
  const host = new URL(remoteUrl).host
  return registryHostAliases[host] ?? host
}

/** refuses what larder would answer with 400 "Not a docker request" */
export const checkMirrorEndpoint = (endpoint: string): string => {
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw new ClientConfigError(`mirror endpoint "${endpoint}" is not a URL`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ClientConfigError(`mirror endpoint "${endpoint}" must be http:// or https://`)
  if (!url.pathname.endsWith("/v2")) {
    throw new ClientConfigError(
      `mirror endpoint "${endpoint}" does not end in /v2. The runtime sends the endpoint's path as it is, so ` +
        `larder would answer every pull with 400 "Not a docker request" and the runtime would fall back to the ` +
        `upstream registry without saying so. Use http://<lan_host>/repository/<repository>/v2.`
    )
  }
  return endpoint
}

/** one mirror per docker repository with an upstream, endpoints from the template, each checked */
export const registryMirrors = (
  repositories: ReadonlyArray<Repository>,
  lan: LanHost,
  template = defaultEndpointTemplate
): ReadonlyArray<RegistryMirror> => {
  const mirrors = repositories
    .filter((repository) => repository.format === "docker" && repository.proxy.remoteUrl !== "")
    .map((repository) => {
      const upstream = new URL(repository.proxy.remoteUrl)
      return {
        registryHost: registryHostOf(repository.proxy.remoteUrl),
        server: upstream.origin,
        repository: repository.name,
        endpoint: checkMirrorEndpoint(template.replaceAll("{lan_host}", lan.hostPort).replaceAll("{repository}", repository.name))
      }
    })
  if (mirrors.length === 0) throw new ClientConfigError("no docker proxy repository with an upstream: nothing to mirror")
  const seen = new Map<string, string>()
  for (const mirror of mirrors) {
    const other = seen.get(mirror.registryHost)
    if (other !== undefined) {
      throw new ClientConfigError(`${other} and ${mirror.repository} both proxy ${mirror.registryHost}; a runtime mirrors a registry host through one repository`)
    }
    seen.set(mirror.registryHost, mirror.repository)
  }
  return mirrors
}

const header = (what: string) => `# ${what}, written by \`larder client-config\`; the runtime falls back to the registry when the mirror is unreachable.\n`

/** k3s `/etc/rancher/k3s/registries.yaml` */
export const renderK3sRegistries = (mirrors: ReadonlyArray<RegistryMirror>): string =>
  header("k3s registry mirrors") +
  toYaml({ mirrors: Object.fromEntries(mirrors.map((mirror) => [mirror.registryHost, { endpoint: [mirror.endpoint] }])) })

/** containerd `<config_path>/<registry host>/hosts.toml` */
export const renderHostsToml = (mirror: RegistryMirror): string =>
  header(`containerd mirror for ${mirror.registryHost}`) +
  toToml({ server: mirror.server, host: { [mirror.endpoint]: { capabilities: ["pull", "resolve"], override_path: true } } })
