// Each repository format's routing rules, chosen by the repository's `format`. Formats without
// their own rules yet are served as raw files.
import type { Repository } from "../../appliance/config/Repository.ts"
import { classify as classifyOci, isDockerHub } from "./oci/classify.ts"
import { classify as classifyRaw } from "./raw/classify.ts"
import type { Route } from "./route.ts"

export type ErrorStyle = "text" | "registry"

export interface FormatRules {
  readonly classify: (method: string, path: string, accept?: string | undefined) => Route
  readonly errorStyle: ErrorStyle
  /** whether the client's query string is passed upstream (containerd adds ?ns= for the mirror) */
  readonly forwardQuery: boolean
}

export const rulesFor = (repository: Repository): FormatRules => {
  switch (repository.format) {
    case "docker": {
      const options = { dockerHub: isDockerHub(repository.proxy.remoteUrl) }
      return { classify: (method, path, accept) => classifyOci(method, path, options, accept), errorStyle: "registry", forwardQuery: false }
    }
    default:
      return { classify: classifyRaw, errorStyle: "text", forwardQuery: true }
  }
}
