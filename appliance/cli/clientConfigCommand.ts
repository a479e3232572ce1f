// `larder client-config <kind> --lan-host HOST:PORT [--out DIR]`: the client-side settings that
// route pulls through larder's LAN listener, printed or written to DIR.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { optionalStringFlag } from "../config/envFlag.ts"
import { applyAptSources, readAptSourcesFiles, revertAptSources } from "../clientConfig/aptApply.ts"
import { renderLarderSources } from "../clientConfig/aptSources.ts"
import { cargoConfig, type ConfigFile, goConfig, npmConfig, pipConfig } from "../clientConfig/buildClients.ts"
import { defaultEndpointTemplate, registryMirrors, renderHostsToml, renderK3sRegistries } from "../clientConfig/containerRuntime.ts"
import { checkHelmRepositories, fluxHelmRepositories, helmRepositories, helmRepositoriesConfig } from "../clientConfig/helm.ts"
import { ClientConfigError, parseLanHost } from "../clientConfig/lanHost.ts"
import { loadRepositories } from "../config/loadRepositories.ts"
import { orUndefined, runAction } from "./action.ts"
import { connectionFlags } from "./connectionFlags.ts"
import { makeRestClient, readPassword } from "./restClient.ts"

const common = {
  lanHost: optionalStringFlag("lan-host", "LARDER_LAN_HOST", "larder's LAN listener as clients reach it: HOST:PORT, no scheme"),
  out: Flag.String("out").pipe(Flag.withDescription("Write the files into this directory instead of printing them"), Flag.optional)
}

const lanHostOf = (value: string | undefined) => {
  if (value === undefined) throw new ClientConfigError("--lan-host HOST:PORT is required (or LARDER_LAN_HOST)")
  return parseLanHost(value)
}

/** prints the files, or writes them into `out` saying where each belongs */
const emit = (files: ReadonlyArray<ConfigFile>, out: string | undefined) => {
  if (out === undefined) {
    for (const file of files) {
      if (files.length > 1) console.log(`# ==> ${file.name} (${file.installHint})`)
      process.stdout.write(file.text)
    }
    return
  }
  for (const file of files) {
    const path = join(out, file.name)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, file.text)
    console.log(`wrote ${path}  (use: ${file.installHint})`)
  }
}

const simple = (kind: string, description: string, make: (lan: ReturnType<typeof parseLanHost>) => ConfigFile) =>
  Command.make(kind, common, (options) =>
    runAction(`client-config ${kind}`, async () => emit([make(lanHostOf(orUndefined(options.lanHost)))], orUndefined(options.out)))
  ).pipe(Command.withDescription(description))

const runtimeFlags = {
  ...common,
  repositories: optionalStringFlag("repositories", "LARDER_REPOSITORIES", "The repositories file larder runs with, when its docker upstreams differ from the defaults"),
  endpointTemplate: Flag.String("endpoint-template").pipe(
    Flag.withDescription("Mirror endpoint with {lan_host} and {repository}; must end in /v2"),
    Flag.withDefault(defaultEndpointTemplate)
  )
}

const mirrorsOf = async (options: { readonly lanHost: string | undefined; readonly repositories: string | undefined; readonly endpointTemplate: string }) => {
  const lan = lanHostOf(options.lanHost)
  const { repositories } = await Effect.runPromise(loadRepositories(options.repositories))
  return registryMirrors(repositories, lan, options.endpointTemplate)
}

const k3s = Command.make("k3s", runtimeFlags, (options) =>
  runAction("client-config k3s", async () => {
    const mirrors = await mirrorsOf({ lanHost: orUndefined(options.lanHost), repositories: orUndefined(options.repositories), endpointTemplate: options.endpointTemplate })
    emit([{ name: "registries.yaml", text: renderK3sRegistries(mirrors), installHint: "/etc/rancher/k3s/registries.yaml, then restart k3s" }], orUndefined(options.out))
  })).pipe(Command.withDescription("k3s registries.yaml: a mirror endpoint per registry host"))

const containerd = Command.make("containerd", runtimeFlags, (options) =>
  runAction("client-config containerd", async () => {
    const mirrors = await mirrorsOf({ lanHost: orUndefined(options.lanHost), repositories: orUndefined(options.repositories), endpointTemplate: options.endpointTemplate })
    emit(
      mirrors.map((mirror) => ({
        name: `${mirror.registryHost}/hosts.toml`,
        text: renderHostsToml(mirror),
        installHint: "containerd's registry config_path, e.g. /etc/containerd/certs.d"
      })),
      orUndefined(options.out)
    )
  })).pipe(Command.withDescription("containerd hosts.toml per registry host (config_path layout)"))

const apt = Command.make("apt", {
  ...common,
  root: Flag.String("root").pipe(Flag.withDescription("Root of the file system whose etc/apt is read (and changed with --apply/--revert)"), Flag.withDefault("/")),
  apply: Flag.Boolean("apply").pipe(Flag.withDescription("Write etc/apt/sources.list.d/larder.sources and rename the files it replaces to <name>.disabled"), Flag.withDefault(false)),
  revert: Flag.Boolean("revert").pipe(Flag.withDescription("Undo --apply: rename the .disabled files back, remove larder.sources"), Flag.withDefault(false))
}, (options) =>
  runAction("client-config apt", async () => {
    if (options.apply && options.revert) throw new ClientConfigError("--apply and --revert exclude each other")
    if (options.revert) {
      for (const line of await revertAptSources(options.root)) console.log(line)
      return
    }
    const lan = lanHostOf(orUndefined(options.lanHost))
    if (options.apply) {
      for (const line of await applyAptSources(options.root, lan)) console.log(line)
      return
    }
    const { text } = renderLarderSources(await readAptSourcesFiles(options.root), lan)
    emit([{ name: "larder.sources", text, installHint: "/etc/apt/sources.list.d/, with the files it replaces disabled (or use --apply)" }], orUndefined(options.out))
  })).pipe(Command.withDescription("apt: a deb822 larder.sources for apt-distro and apt-distro-security"))

const helm = Command.make("helm", { ...common, ...connectionFlags }, (options) =>
  runAction("client-config helm", async () => {
    const lan = lanHostOf(orUndefined(options.lanHost))
    // the REST API answers on the LAN listener too
    const api = makeRestClient({ url: orUndefined(options.url) ?? lan.baseUrl, user: options.user, password: readPassword(orUndefined(options.passwordFile)) })
    await checkHelmRepositories(api, helmRepositories)
    emit([helmRepositoriesConfig(lan, helmRepositories), fluxHelmRepositories(lan, helmRepositories)], orUndefined(options.out))
  })).pipe(Command.withDescription("helm repositories.yaml and Flux HelmRepository objects, once the proxies exist and are online"))

export const clientConfigCommand = Command.make("client-config").pipe(
  Command.withDescription("Write the client settings that route pulls through larder"),
  Command.withSubcommands([
    k3s,
    containerd,
    apt,
    simple("cargo", "cargo config.toml replacing crates-io with the sparse cargo-proxy", cargoConfig),
    simple("npm", "npm .npmrc with the npm-proxy registry", npmConfig),
    simple("pip", "pip.conf with the pypi-proxy index", pipConfig),
    simple("go", "the GOPROXY line for go-proxy", goConfig),
    helm
  ])
)
