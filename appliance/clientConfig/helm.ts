// Helm chart sources through larder: helm's repositories.yaml entries and Flux HelmRepository
// objects. Written only after the REST API shows the proxies exist and are online: switching a chart
// source to a proxy that does not exist yet fails every release that depends on it at once.
import { stringify as toYaml } from "yaml"
import { CliError, type RestClient } from "../cli/restClient.ts"
import { ClientConfigError, repositoryUrl, type LanHost } from "./lanHost.ts"
import type { ConfigFile } from "./buildClients.ts"

export const helmRepositories = ["helm-stable", "helm-vendor"] as const

/** resolves when every repository exists as an online helm proxy; else throws saying what to do */
export const checkHelmRepositories = async (api: RestClient, names: ReadonlyArray<string>): Promise<void> => {
  const problems: Array<string> = []
  for (const name of names) {
    const response = await api.call("GET", `/service/rest/v1/repositories/${encodeURIComponent(name)}`)
    if (response.status === 404) {
      problems.push(`${name} does not exist`)
      continue
    }
    if (response.status !== 200) throw new CliError(`GET /service/rest/v1/repositories/${name} answered ${response.status}: ${response.text.slice(0, 200)}`)
    const repository = JSON.parse(response.text) as { format?: string; online?: boolean }
    if (repository.format !== "helm") problems.push(`${name} is a ${repository.format} repository, not helm`)
    else if (repository.online !== true) problems.push(`${name} is offline`)
  }
  if (problems.length > 0) {
    throw new ClientConfigError(
      `refusing to write helm sources: ${problems.join("; ")}. Switching a chart source to a proxy that does not ` +
        `exist yet fails every dependent release at once. Create the proxies first (larder repos apply FILE, or ` +
        `POST /service/rest/v1/repositories/helm/proxy), check they serve index.yaml, then run this again.`
    )
  }
}

/** helm's repository config (`helm --repository-config FILE`, or merged into ~/.config/helm/repositories.yaml) */
export const helmRepositoriesConfig = (lan: LanHost, names: ReadonlyArray<string>): ConfigFile => ({
  name: "repositories.yaml",
  text: "# helm chart repositories through larder, written by `larder client-config helm`\n" +
    toYaml({ apiVersion: "", generated: new Date(0).toISOString(), repositories: names.map((name) => ({ name, url: repositoryUrl(lan, name) })) }),
  installHint: "helm --repository-config <file>, or HELM_REPOSITORY_CONFIG=<file>"
})

/** Flux HelmRepository objects for the same proxies */
export const fluxHelmRepositories = (lan: LanHost, names: ReadonlyArray<string>): ConfigFile => ({
  name: "helmrepositories.yaml",
  text: "# Flux HelmRepository objects through larder, written by `larder client-config helm`\n" +
    names.map((name) =>
      toYaml({
        apiVersion: "source.toolkit.fluxcd.io/v1",
        kind: "HelmRepository",
        metadata: { name, namespace: "flux-system" },
        spec: { interval: "1h", url: repositoryUrl(lan, name) }
      })
    ).join("---\n"),
  installHint: "kubectl apply -f <file>"
})
