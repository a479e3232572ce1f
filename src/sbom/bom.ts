// A BOM as uploaded: decoded, checked against the CycloneDX JSON schema of the spec version it
// declares (1.2 to 1.6), and reduced to the components larder lists. Nothing is stored unless
// every check passes.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from "ajv"

// CommonJS packages, loaded as the CycloneDX library loads them
const require = createRequire(import.meta.url)
const Ajv = (require("ajv") as { default: typeof AjvClass }).default
const addFormats = (require("ajv-formats") as { default: (ajv: AjvClass) => void }).default
const addDraft2019Formats = require("ajv-formats-draft2019") as (ajv: AjvClass, options: { formats: Array<string> }) => void
interface SchemaFiles {
  readonly CDX: { readonly JSON_STRICT_SCHEMA: Readonly<Record<string, string | undefined>> }
  readonly SPDX: { readonly JSON_SCHEMA: string }
  readonly JSF: { readonly JSON_SCHEMA: string }
  readonly CryptoDefs: { readonly JSON_SCHEMA: string }
}
const schemaFiles = (require("@cyclonedx/cyclonedx-library") as { _Resources: { FILES: SchemaFiles } })._Resources.FILES

export const acceptedSpecVersions = ["1.2", "1.3", "1.4", "1.5", "1.6"] as const

// The CycloneDX library's own validator stops at the first error; this one is set up the same way
// (its bundled strict schemas, no remote schemas) but reports every error, as Dependency-Track does.
const validators = new Map<string, ValidateFunction>()
const validatorFor = (version: string): ValidateFunction => {
  let validator = validators.get(version)
  if (validator === undefined) {
    const files = schemaFiles
    const schemaFile = files.CDX.JSON_STRICT_SCHEMA[version]
    if (schemaFile === undefined) throw new Error(`no CycloneDX ${version} schema`)
    const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as object
    const ajv = new Ajv({
      allErrors: true,
      strict: false,
      addUsedSchema: false,
      schemas: {
        "http://cyclonedx.org/schema/spdx.SNAPSHOT.schema.json": read(files.SPDX.JSON_SCHEMA),
        "http://cyclonedx.org/schema/jsf-0.82.SNAPSHOT.schema.json": read(files.JSF.JSON_SCHEMA),
        "http://cyclonedx.org/schema/cryptography-defs.SNAPSHOT.schema.json": read(files.CryptoDefs.JSON_SCHEMA)
      },
      loadSchema: (uri: string) => Promise.reject(new Error(`remote schemas are disabled: ${uri}`))
    })
    addFormats(ajv)
    addDraft2019Formats(ajv, { formats: ["idn-email"] })
    ajv.addFormat("iri-reference", true)
    const compiled = ajv.compile(read(schemaFile))
    validators.set(version, compiled)
    return compiled
  }
  return validator
}

/** schema errors as Dependency-Track words them: "$.components[0].type: must be equal to one of the allowed values [...]" */
const describe = (error: ErrorObject): string => {
  const path = "$" + error.instancePath.split("/").slice(1).map((part) => /^\d+$/.test(part) ? `[${part}]` : `.${part}`).join("")
  const allowed = (error.params as { allowedValues?: unknown }).allowedValues
  const extra = (error.params as { additionalProperty?: unknown }).additionalProperty
  return `${path}: ${error.message ?? "invalid"}${Array.isArray(allowed) ? ` ${JSON.stringify(allowed)}` : ""}${typeof extra === "string" ? ` (${extra})` : ""}`
}

/** every schema error of a CycloneDX JSON text against `specVersion`; empty when valid */
export const schemaErrors = (json: string, specVersion: string): ReadonlyArray<string> => {
  let document: unknown
  try {
    document = JSON.parse(json)
  } catch (error) {
    return [`$: not JSON: ${(error as Error).message}`]
  }
  const validate = validatorFor(specVersion)
  return validate(document) ? [] : [...new Set((validate.errors ?? []).map(describe))]
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
  const errors = schemaErrors(json, specVersion)
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
