// A BOM as uploaded: decoded, checked against the CycloneDX JSON schema of the spec version it
// declares (1.2 to 1.6), and reduced to the components larder lists. Nothing is stored unless
// every check passes.
import { Spec, Validation } from "@cyclonedx/cyclonedx-library"

export const acceptedSpecVersions = ["1.2", "1.3", "1.4", "1.5", "1.6"] as const

const validators = new Map<string, Validation.JsonStrictValidator>()
const validatorFor = (version: string) => {
  let validator = validators.get(version)
  if (validator === undefined) {
    validator = new Validation.JsonStrictValidator(version as Spec.Version)
    validators.set(version, validator)
  }
  return validator
}

interface AjvError {
  readonly instancePath?: string
  readonly message?: string
  readonly params?: Record<string, unknown>
}

/** schema errors as Dependency-Track words them: "$.components[0].type: must be equal to one of the allowed values [...]" */
const describe = (error: AjvError): string => {
  const path = "$" + (error.instancePath ?? "").split("/").slice(1).map((part) => /^\d+$/.test(part) ? `[${part}]` : `.${part}`).join("")
  const allowed = error.params?.allowedValues
  const extra = error.params?.additionalProperty
  return `${path}: ${error.message ?? "invalid"}${Array.isArray(allowed) ? ` ${JSON.stringify(allowed)}` : ""}${typeof extra === "string" ? ` (${extra})` : ""}`
}

/** schema errors of a CycloneDX JSON text against `specVersion`; empty when valid */
export const schemaErrors = async (json: string, specVersion: string): Promise<ReadonlyArray<string>> => {
  const result = await validatorFor(specVersion).validate(json)
  if (result === null) return []
  return Array.isArray(result) ? (result as ReadonlyArray<AjvError>).map(describe) : [String(result)]
}

export interface BomComponent {
  readonly uuid: string
  readonly name: string
  readonly version: string | undefined
  readonly group: string | undefined
  readonly type: string
  readonly purl: string | undefined
  readonly bomRef: string | undefined
}

export type CheckedBom =
  | { readonly ok: true; readonly specVersion: string; readonly components: ReadonlyArray<Omit<BomComponent, "uuid">>; readonly json: string }
  | { readonly ok: false; readonly title: string; readonly detail: string; readonly errors: ReadonlyArray<string> }

const invalid = (detail: string, errors: ReadonlyArray<string> = []): CheckedBom => ({ ok: false, title: "The uploaded BOM is invalid", detail, errors })

/** every component, nested ones included */
const flatten = (components: unknown): Array<Record<string, unknown>> =>
  Array.isArray(components)
    ? components.flatMap((component) =>
      component !== null && typeof component === "object"
        ? [component as Record<string, unknown>, ...flatten((component as Record<string, unknown>).components)]
        : [])
    : []

const text = (value: unknown) => typeof value === "string" && value !== "" ? value : undefined

/** checks an uploaded BOM (JSON text) */
export const checkBom = async (json: string): Promise<CheckedBom> => {
  let document: Record<string, unknown>
  try {
    document = JSON.parse(json) as Record<string, unknown>
  } catch (error) {
    if (json.trimStart().startsWith("<")) return invalid("XML BOMs are not accepted; upload CycloneDX JSON")
    return invalid(`the BOM is not JSON: ${(error as Error).message}`)
  }
  if (document === null || typeof document !== "object" || Array.isArray(document)) return invalid("the BOM must be a JSON object")
  if (document.bomFormat !== "CycloneDX") return invalid(`bomFormat must be "CycloneDX", got ${JSON.stringify(document.bomFormat)}`)
  const specVersion = document.specVersion
  if (typeof specVersion !== "string" || !(acceptedSpecVersions as ReadonlyArray<string>).includes(specVersion)) {
    return invalid(`specVersion ${JSON.stringify(specVersion)} is not accepted; CycloneDX ${acceptedSpecVersions.join(", ")} are (1.4 is the platform's version)`)
  }
  const errors = await schemaErrors(json, specVersion)
  if (errors.length > 0) return invalid("Schema validation failed", errors)
  const components = flatten(document.components).map((component) => ({
    name: String(component.name),
    version: text(component.version),
    group: text(component.group),
    type: String(component.type),
    purl: text(component.purl),
    bomRef: text(component["bom-ref"])
  }))
  return { ok: true, specVersion, components, json }
}
