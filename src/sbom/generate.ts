// The Kubernetes-to-CycloneDX 1.4 SBOM generator behind `larder sbom generate`: reads workload
// manifests (YAML, JSON, Lists, `kubectl get -A -o json`), collects the container images their pod
// specs name, parses them with the Docker/distribution reference grammar, and writes one `container`
// component per distinct image with an OCI purl. Output is deterministic: no timestamp or serial
// number unless asked for, components sorted by purl. No file I/O here.
import { Enums, Models, Serialize, Spec } from "@cyclonedx/cyclonedx-library"
import { PackageURL } from "packageurl-js"
import { parseAllDocuments } from "yaml"
import { schemaErrors } from "./bom.ts"

export interface ImageReference {
  readonly registry: string
  readonly repository: string
  readonly tag: string | undefined
  readonly digest: string | undefined
  readonly original: string
}

export interface WorkloadImage {
  readonly image: ImageReference
  readonly usedBy: ReadonlyArray<string>
}

export interface SbomOptions {
  readonly name?: string
  readonly version?: string
  readonly serialNumber?: string
  readonly timestamp?: Date
}

// ---- image references (github.com/distribution/reference, normalize.go + regexp.go) ----

const defaultRegistry = "docker.io"
const legacyRegistry = "index.docker.io"
const officialNamespace = "library"

const alphanumeric = "[a-z0-9]+"
const separator = "(?:[_.]|__|[-]+)"
const pathComponent = `${alphanumeric}(?:${separator}${alphanumeric})*`
const repositoryPattern = new RegExp(`^${pathComponent}(?:/${pathComponent})*$`)
const domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`
const registryPattern = new RegExp(`^${host}(?::[0-9]+)?$`)
const tagPattern = /^[\w][\w.-]{0,127}$/
const digestPattern = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/
// go-digest checks the encoded part of the algorithms it knows exactly
const digestLengths: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 }
const nameTotalLengthMax = 255

const invalid = (reference: string, why: string): Error => new Error(`invalid image reference ${JSON.stringify(reference)}: ${why}`)

const checkDigest = (reference: string, digest: string): void => {
  if (!digestPattern.test(digest)) throw invalid(reference, `bad digest ${JSON.stringify(digest)} (expected algorithm:hex)`)
  const [algorithm, encoded] = digest.split(":", 2)
  const length = digestLengths[algorithm]
  if (length === undefined) {
    if (!/^[a-fA-F0-9]{32,}$/.test(encoded)) throw invalid(reference, `bad digest ${JSON.stringify(digest)} (encoded part must be at least 32 hex characters)`)
  } else if (!new RegExp(`^[a-f0-9]{${length}}$`).test(encoded)) {
    throw invalid(reference, `bad digest ${JSON.stringify(digest)} (${algorithm} needs ${length} lowercase hex characters)`)
  }
}

/** a Docker/distribution image reference, normalized the way `docker pull` reads it */
export const parseImageReference = (reference: string): ImageReference => {
  if (typeof reference !== "string" || reference.trim() === "") throw invalid(String(reference ?? ""), "empty name")
  if (reference !== reference.trim()) throw invalid(reference, "leading or trailing whitespace")
  const at = reference.indexOf("@")
  let digest: string | undefined
  let rest = reference
  if (at !== -1) {
    digest = reference.slice(at + 1)
    rest = reference.slice(0, at)
    checkDigest(reference, digest)
  }
  // the tag is after the last ":" that follows the last "/", so a registry port is not mistaken for one
  let tag: string | undefined
  const colon = rest.lastIndexOf(":")
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1)
    rest = rest.slice(0, colon)
    if (!tagPattern.test(tag)) throw invalid(reference, `bad tag ${JSON.stringify(tag)}`)
  }
  if (rest === "") throw invalid(reference, "empty name")
  if (rest.length > nameTotalLengthMax) throw invalid(reference, `name longer than ${nameTotalLengthMax} characters`)

  // the first component is a registry only if it looks like a host: it has "." or ":", is
  // "localhost", or has uppercase letters (which a repository path cannot have)
  const slash = rest.indexOf("/")
  const first = slash === -1 ? "" : rest.slice(0, slash)
  let registry: string
  let repository: string
  if (slash === -1 || (!/[.:]/.test(first) && first !== "localhost" && first.toLowerCase() === first)) {
    registry = defaultRegistry
    repository = rest
  } else {
    registry = first
    repository = rest.slice(slash + 1)
  }
  if (!registryPattern.test(registry)) throw invalid(reference, `bad registry ${JSON.stringify(registry)}`)
  if (registry === legacyRegistry) registry = defaultRegistry
  if (registry === defaultRegistry && !repository.includes("/")) repository = `${officialNamespace}/${repository}`
  if (repository === "") throw invalid(reference, "empty repository")
  if (/[A-Z]/.test(repository)) throw invalid(reference, `repository ${JSON.stringify(repository)} must be lowercase`)
  if (!repositoryPattern.test(repository)) throw invalid(reference, `bad repository ${JSON.stringify(repository)}`)
  if (/^[a-f0-9]{64}$/.test(rest)) throw invalid(reference, "a 64-character hex string is an image ID, not a name")
  return { registry, repository, tag: tag ?? (digest === undefined ? "latest" : undefined), digest, original: reference }
}

/** the normalized form, e.g. docker.io/library/nginx:latest; also the key duplicates are merged on */
export const canonicalImage = (image: ImageReference): string =>
  `${image.registry}/${image.repository}${image.tag === undefined ? "" : `:${image.tag}`}${image.digest === undefined ? "" : `@${image.digest}`}`

// ---- manifests ----

const record = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? value as Record<string, unknown> : undefined

const path = (value: unknown, ...keys: ReadonlyArray<string>): unknown =>
  keys.reduce<unknown>((current, key) => record(current)?.[key], value)

// where each workload kind keeps its pod spec
const podSpecPaths: Readonly<Record<string, ReadonlyArray<string>>> = {
  Pod: ["spec"],
  PodTemplate: ["template", "spec"],
  Deployment: ["spec", "template", "spec"],
  StatefulSet: ["spec", "template", "spec"],
  DaemonSet: ["spec", "template", "spec"],
  ReplicaSet: ["spec", "template", "spec"],
  ReplicationController: ["spec", "template", "spec"],
  Job: ["spec", "template", "spec"],
  CronJob: ["spec", "jobTemplate", "spec", "template", "spec"]
}

const containerLists: ReadonlyArray<readonly [string, string]> = [
  ["containers", "container"],
  ["initContainers", "init container"],
  ["ephemeralContainers", "ephemeral container"]
]

const describe = (object: Record<string, unknown>): string => {
  const kind = typeof object.kind === "string" && object.kind !== "" ? object.kind : "(no kind)"
  const namespace = path(object, "metadata", "namespace")
  const name = path(object, "metadata", "name") ?? path(object, "metadata", "generateName") ?? "(unnamed)"
  // a manifest without a namespace goes wherever it is applied, so none is made up here
  return typeof namespace === "string" && namespace !== "" ? `${kind}/${namespace}/${String(name)}` : `${kind}/${String(name)}`
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** the images named by the workloads in the documents, merged per normalized reference; other kinds are listed in skipped */
export const imagesOfManifests = (documents: ReadonlyArray<unknown>): { readonly images: ReadonlyArray<WorkloadImage>; readonly skipped: ReadonlyArray<string> } => {
  const found = new Map<string, { image: ImageReference; usedBy: Set<string> }>()
  const skipped = new Set<string>()

  const visit = (document: unknown, impliedKind: string | undefined): void => {
    if (document === null || document === undefined) return
    if (Array.isArray(document)) {
      for (const item of document) visit(item, impliedKind)
      return
    }
    const object = record(document)
    if (object === undefined) {
      skipped.add(`(not a Kubernetes object: ${typeof document})`)
      return
    }
    const kind = typeof object.kind === "string" && object.kind !== "" ? object.kind : impliedKind
    // kind: List (kubectl) or a typed list such as PodList, whose items the API server sends without a kind
    if (kind !== undefined && kind.endsWith("List") && Array.isArray(object.items)) {
      for (const item of object.items) visit(item, kind === "List" ? undefined : kind.slice(0, -"List".length))
      return
    }
    const withKind = kind === object.kind ? object : { ...object, kind }
    const specPath = kind === undefined ? undefined : podSpecPaths[kind]
    if (specPath === undefined) {
      skipped.add(describe(withKind))
      return
    }
    const workload = describe(withKind)
    const spec = path(object, ...specPath)
    for (const [field, label] of containerLists) {
      const containers = path(spec, field)
      if (!Array.isArray(containers)) continue
      for (const container of containers) {
        const name = String(path(container, "name") ?? "(unnamed)")
        const user = `${workload} (${label} ${name})`
        const reference = path(container, "image")
        if (typeof reference !== "string" || reference === "") {
          skipped.add(`${user}: no image`)
          continue
        }
        let image: ImageReference
        try {
          image = parseImageReference(reference)
        } catch (error) {
          throw new Error(`${user}: ${(error as Error).message}`)
        }
        const key = canonicalImage(image)
        const entry = found.get(key)
        if (entry === undefined) found.set(key, { image, usedBy: new Set([user]) })
        else {
          entry.usedBy.add(user)
          // keep the smallest original spelling so shuffled input gives the same result
          if (byCodeUnits(image.original, entry.image.original) < 0) entry.image = image
        }
      }
    }
  }

  for (const document of documents) visit(document, undefined)
  const images = [...found.entries()]
    .sort(([a], [b]) => byCodeUnits(a, b))
    .map(([, { image, usedBy }]) => ({ image, usedBy: [...usedBy].sort(byCodeUnits) }))
  return { images, skipped: [...skipped].sort(byCodeUnits) }
}

/** the documents in a manifest file: JSON, or YAML with any number of `---` separated documents; empty ones are dropped */
export const parseManifestText = (text: string, source: string): Array<unknown> => {
  const trimmed = text.trimStart()
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return [JSON.parse(text)]
    } catch (jsonError) {
      // a YAML flow mapping also starts with "{"; only report the JSON error if YAML cannot read it either
      try {
        return parseYaml(text, source)
      } catch {
        throw new Error(`${source}: document 1: invalid JSON: ${(jsonError as Error).message}`)
      }
    }
  }
  return parseYaml(text, source)
}

const parseYaml = (text: string, source: string): Array<unknown> => {
  const documents: Array<unknown> = []
  parseAllDocuments(text).forEach((document, index) => {
    const error = document.errors[0]
    if (error !== undefined) throw new Error(`${source}: document ${index + 1}: ${error.message}`)
    let value: unknown
    try {
      value = document.toJS()
    } catch (cause) {
      throw new Error(`${source}: document ${index + 1}: ${(cause as Error).message}`)
    }
    if (value !== null && value !== undefined) documents.push(value)
  })
  return documents
}

// ---- CycloneDX ----

/** pkg:oci/<name>@<digest>?repository_url=<registry>/<repository>&tag=<tag>, encoded by packageurl-js */
export const imagePurl = (image: ImageReference): string => {
  const qualifiers: Record<string, string> = { repository_url: `${image.registry}/${image.repository}` }
  if (image.tag !== undefined) qualifiers.tag = image.tag
  const name = image.repository.slice(image.repository.lastIndexOf("/") + 1)
  return new PackageURL("oci", undefined, name, image.digest, qualifiers).toString()
}

const serialNumberPattern = /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** CycloneDX 1.4 JSON for the images: one container component each, the workloads using it as larder:usedBy properties */
export const generateSbom = (images: ReadonlyArray<WorkloadImage>, options: SbomOptions = {}): string => {
  if (options.serialNumber !== undefined && !serialNumberPattern.test(options.serialNumber)) {
    throw new Error(`invalid serial number ${JSON.stringify(options.serialNumber)}: expected urn:uuid:<RFC 4122 UUID>`)
  }
  const name = options.name ?? "kubernetes-workloads"
  // an explicit bom-ref: the library would otherwise make up a random one
  const metadataComponent = new Models.Component(Enums.ComponentType.Application, name, {
    bomRef: options.version === undefined ? name : `${name}@${options.version}`,
    version: options.version
  })
  const bom = new Models.Bom({ metadata: new Models.Metadata({ component: metadataComponent }) })
  if (options.serialNumber !== undefined) bom.serialNumber = options.serialNumber
  if (options.timestamp !== undefined) bom.metadata.timestamp = options.timestamp

  // merge again by purl, in case the caller built the list by hand
  const byPurl = new Map<string, { image: ImageReference; usedBy: Set<string> }>()
  for (const { image, usedBy } of images) {
    const purl = imagePurl(image)
    const entry = byPurl.get(purl) ?? { image, usedBy: new Set<string>() }
    for (const user of usedBy) entry.usedBy.add(user)
    byPurl.set(purl, entry)
  }
  for (const purl of [...byPurl.keys()].sort(byCodeUnits)) {
    const { image, usedBy } = byPurl.get(purl)!
    const component = new Models.Component(Enums.ComponentType.Container, image.repository.slice(image.repository.lastIndexOf("/") + 1), {
      bomRef: purl,
      purl,
      version: image.digest ?? image.tag
    })
    component.properties.add(new Models.Property("larder:image", canonicalImage(image)))
    for (const user of [...usedBy].sort(byCodeUnits)) component.properties.add(new Models.Property("larder:usedBy", user))
    bom.components.add(component)
    metadataComponent.dependencies.add(component.bomRef)
  }
  const serializer = new Serialize.JsonSerializer(new Serialize.JSON.Normalize.Factory(Spec.Spec1dot4))
  // insertion order is already sorted by purl; the library's sortLists uses localeCompare, which
  // depends on the ICU locale, so it is left off
  return serializer.serialize(bom, { sortLists: false, space: 2 }) + "\n"
}

/** schema errors of a CycloneDX JSON document, as uploads are checked (src/sbom/bom.ts); empty when valid */
export const validateSbom = async (json: string, specVersion: string = "1.4"): Promise<ReadonlyArray<string>> => {
  if (!(Object.values(Spec.Version) as ReadonlyArray<string>).includes(specVersion)) throw new Error(`unknown CycloneDX spec version ${JSON.stringify(specVersion)}`)
  return schemaErrors(json, specVersion)
}
