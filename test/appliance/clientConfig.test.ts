// client-config's pure parts: the --lan-host value, registry mirrors (k3s and containerd, the /v2
// rule), and the package clients' files, each parsed back by the library its client reads it with.
import t from "tap"
import { parse as parseToml } from "smol-toml"
import { parse as parseYaml } from "yaml"
import { cargoConfig, goConfig, npmConfig, pipConfig } from "../../appliance/clientConfig/buildClients.ts"
import { checkMirrorEndpoint, registryHostOf, registryMirrors, renderHostsToml, renderK3sRegistries } from "../../appliance/clientConfig/containerRuntime.ts"
import { fluxHelmRepositories, helmRepositoriesConfig } from "../../appliance/clientConfig/helm.ts"
import { parseLanHost } from "../../appliance/clientConfig/lanHost.ts"
import type { Repository } from "../../appliance/config/Repository.ts"

t.test("--lan-host: host:port without a scheme", async (t) => {
  const good: Array<[string, string]> = [
    ["10.0.0.5:8081", "10.0.0.5"],
    ["larder.lan:8081", "larder.lan"],
    ["larder:80", "larder"],
    ["larder.lan", "larder.lan"],
    ["[fd00::5]:8081", "[fd00::5]"]
  ]
  for (const [value, host] of good) {
    const lan = parseLanHost(value)
    t.equal(lan.host, host, `${value}: host`)
    t.equal(lan.baseUrl, `http://${value}`, `${value}: base URL`)
  }
  const bad: Array<[string, RegExp]> = [
    ["http://10.0.0.5:8081", /without a scheme/],
    ["https://larder.lan", /without a scheme/],
    ["10.0.0.5:8081/repository", /must be HOST:PORT/],
    ["10.0.0.5:99999", /must be HOST:PORT/],
    ["10.0.0.5:0", /must be HOST:PORT/],
    ["", /must be HOST:PORT/],
    ["host name:80", /must be HOST:PORT/],
    ["fd00::5:8081", /must be HOST:PORT/]
  ]
  for (const [value, message] of bad) t.throws(() => parseLanHost(value), message, `refused: "${value}"`)
})

const docker = (name: string, remoteUrl: string): Repository => ({
  name,
  format: "docker",
  type: "proxy",
  online: true,
  proxy: { remoteUrl, contentMaxAge: 1440, metadataMaxAge: 1440 },
  negativeCache: { enabled: true, timeToLive: 1440 }
})
const lan = parseLanHost("10.0.0.5:8081")
const defaults = [
  docker("docker-public", "https://registry-1.docker.io"),
  docker("docker-codehost", "https://ghcr.io"),
  docker("docker-registry3", "https://quay.io/"),
  { ...docker("npm-proxy", "https://npm.example/"), format: "npm" as const }
]

t.test("registry hosts: Docker Hub's API host is mirrored as docker.io, others by their host", async (t) => {
  t.equal(registryHostOf("https://registry-1.docker.io"), "docker.io")
  t.equal(registryHostOf("https://index.docker.io/"), "docker.io")
  t.equal(registryHostOf("https://ghcr.io"), "ghcr.io")
  t.equal(registryHostOf("http://127.0.0.1:5000/"), "127.0.0.1:5000", "a port stays: containerd's hosts dir is named host:port")
})

t.test("k3s registries.yaml: the spec's three mirrors, each endpoint ending in /v2", async (t) => {
  const parsed = parseYaml(renderK3sRegistries(registryMirrors(defaults, lan)))
  t.same(parsed, {
    mirrors: {
      "docker.io": { endpoint: ["http://10.0.0.5:8081/repository/docker-public/v2"] },
      "ghcr.io": { endpoint: ["http://10.0.0.5:8081/repository/docker-codehost/v2"] },
      "quay.io": { endpoint: ["http://10.0.0.5:8081/repository/docker-registry3/v2"] }
    }
  })
})

t.test("containerd hosts.toml: server is the registry, the mirror host pulls and resolves with override_path", async (t) => {
  const [hub] = registryMirrors(defaults, lan)
  t.same(parseToml(renderHostsToml(hub)), {
    server: "https://registry-1.docker.io",
    host: { "http://10.0.0.5:8081/repository/docker-public/v2": { capabilities: ["pull", "resolve"], override_path: true } }
  })
})

t.test("an endpoint not ending in /v2 is refused with the reason", async (t) => {
  t.equal(checkMirrorEndpoint("http://h:1/repository/r/v2"), "http://h:1/repository/r/v2")
  for (const endpoint of ["http://h:1/repository/r", "http://h:1/repository/r/v2/", "http://h:1/repository/r/v2x", "http://h:1/"]) {
    t.throws(() => checkMirrorEndpoint(endpoint), /does not end in \/v2.*400 "Not a docker request".*fall back to the upstream registry/, endpoint)
  }
  t.throws(() => checkMirrorEndpoint("ftp://h/v2"), /http:\/\/ or https:\/\//)
  t.throws(() => checkMirrorEndpoint("h:1/v2"), /http:\/\/ or https:\/\//, "no scheme: not a registry URL")
  t.throws(() => registryMirrors(defaults, lan, "http://{lan_host}/repository/{repository}"), /does not end in \/v2/, "a template without /v2")
  t.same(
    registryMirrors(defaults, lan, "https://{lan_host}/larder/repository/{repository}/v2").map((mirror) => mirror.endpoint)[0],
    "https://10.0.0.5:8081/larder/repository/docker-public/v2",
    "a template with a prefix is fine when it ends in /v2"
  )
})

t.test("mirrors need docker repositories with upstreams, one per registry host", async (t) => {
  t.throws(() => registryMirrors([defaults[3]], lan), /no docker proxy repository/, "no docker repository")
  t.throws(() => registryMirrors([docker("docker-public", "")], lan), /nothing to mirror/, "no upstream set")
  t.throws(() => registryMirrors([docker("a", "https://ghcr.io"), docker("b", "https://ghcr.io/")], lan), /a and b both proxy ghcr.io/)
})

t.test("package clients' files parse back to larder's repository URLs", async (t) => {
  t.same(parseToml(cargoConfig(lan).text), {
    source: { "crates-io": { "replace-with": "larder" }, larder: { registry: "sparse+http://10.0.0.5:8081/repository/cargo-proxy/" } }
  })
  t.equal(cargoConfig(lan).name, "config.toml")
  t.match(npmConfig(lan).text, /^registry=http:\/\/10\.0\.0\.5:8081\/repository\/npm-proxy\/$/m)
  t.match(pipConfig(lan).text, /^\[global\]\nindex-url = http:\/\/10\.0\.0\.5:8081\/repository\/pypi-proxy\/simple\/\ntrusted-host = 10\.0\.0\.5$/m)
  t.equal(goConfig(lan).text, "GOPROXY=http://10.0.0.5:8081/repository/go-proxy\n", "no ,direct: a failure is not silently fetched around larder")
})

t.test("helm: repositories.yaml entries and Flux HelmRepository objects", async (t) => {
  const names = ["helm-stable", "helm-vendor"]
  t.same(parseYaml(helmRepositoriesConfig(lan, names).text).repositories, [
    { name: "helm-stable", url: "http://10.0.0.5:8081/repository/helm-stable/" },
    { name: "helm-vendor", url: "http://10.0.0.5:8081/repository/helm-vendor/" }
  ])
  const documents = fluxHelmRepositories(lan, names).text.split(/^---$/m).map((document) => parseYaml(document))
  t.same(documents.map((document) => [document.kind, document.metadata.name, document.spec.url]), [
    ["HelmRepository", "helm-stable", "http://10.0.0.5:8081/repository/helm-stable/"],
    ["HelmRepository", "helm-vendor", "http://10.0.0.5:8081/repository/helm-vendor/"]
  ])
})
