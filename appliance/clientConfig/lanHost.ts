// The `--lan-host HOST:PORT` every client config is built from: larder's LAN listener as clients
// reach it. Host and port only; the configs add the scheme (http://, like the spec's template).
export class ClientConfigError extends Error {}

const hostPort = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::(\d{1,5}))?$/

export interface LanHost {
  /** as given, e.g. "10.0.0.5:8081" or "[fd00::5]:8081" */
  readonly hostPort: string
  /** without the port (IPv6 keeps its brackets) */
  readonly host: string
  readonly baseUrl: string
}

export const parseLanHost = (value: string): LanHost => {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ClientConfigError(`--lan-host takes host:port without a scheme (the configs add http://): got "${value}"`)
  }
  const match = hostPort.exec(value)
  if (match === null || (match[2] !== undefined && (Number(match[2]) < 1 || Number(match[2]) > 65535))) {
    throw new ClientConfigError(`--lan-host must be HOST:PORT of larder's LAN listener, e.g. 10.0.0.5:8081: got "${value}"`)
  }
  return { hostPort: value, host: match[1], baseUrl: `http://${value}` }
}

/** the URL of a repository on the LAN listener, ending in "/" */
export const repositoryUrl = (lan: LanHost, repository: string): string => `${lan.baseUrl}/repository/${repository}/`
