// Each repository format's routing rules, chosen by the repository's `format`.
import type { Repository } from "../../appliance/config/Repository.ts"
import { aptRules } from "./apt/rules.ts"
import { cargoRules } from "./cargo/rules.ts"
import { goRules } from "./go/rules.ts"
import { helmRules } from "./helm/rules.ts"
import { npmRules } from "./npm/rules.ts"
import { classify as classifyOci, isDockerHub } from "./oci/classify.ts"
import { pypiRules } from "./pypi/rules.ts"
import { classify as classifyRaw } from "./raw/classify.ts"
import type { FormatRules } from "./route.ts"

export type { ErrorStyle, FormatRules } from "./route.ts"

export const rawRules: FormatRules = { classify: classifyRaw, errorStyle: "text", forwardQuery: true }

export const rulesFor = (repository: Repository): FormatRules => {
  switch (repository.format) {
    case "docker": {
      const options = { dockerHub: isDockerHub(repository.proxy.remoteUrl) }
      return { classify: (method, path, accept) => classifyOci(method, path, options, accept), errorStyle: "registry", forwardQuery: false }
    }
    case "apt":
      return aptRules(repository)
    case "npm":
      return npmRules(repository)
    case "pypi":
      return pypiRules(repository)
    case "go":
      return goRules(repository)
    case "cargo":
      return cargoRules(repository)
    case "helm":
      return helmRules(repository)
    default:
      return rawRules
  }
}
