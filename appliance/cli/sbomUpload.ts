// `larder sbom upload`: PUT /api/v1/bom to larder (or Dependency-Track) with the base URL, project
// and API key read from a config file, never from argv, so the key stays out of process listings.
import { chmodSync, readFileSync, statSync } from "node:fs"
import { parse as parseYaml } from "yaml"

export interface UploadConfig {
  readonly url: string
  readonly apiKey: string
  readonly projectName: string
  readonly projectVersion: string | undefined
}

export const readUploadConfig = (file: string, warn: (line: string) => void): UploadConfig => {
  const mode = statSync(file).mode & 0o777
  if ((mode & 0o077) !== 0) {
    // the file holds an API key: readable by others it is as good as published
    chmodSync(file, 0o600)
    warn(`warning: ${file} was readable by others (mode ${mode.toString(8).padStart(4, "0")}); it holds an API key, so its mode is now 0600`)
  }
  let document: Record<string, unknown>
  try {
    document = parseYaml(readFileSync(file, "utf8")) as Record<string, unknown>
  } catch (error) {
    throw new Error(`${file}: not YAML or JSON: ${(error as Error).message}`)
  }
  const field = (name: string, required: boolean): string | undefined => {
    const value = document?.[name]
    if (value === undefined || value === null) {
      if (required) throw new Error(`${file}: ${name} is missing (expected keys: url, apiKey, projectName, projectVersion)`)
      return undefined
    }
    if (typeof value !== "string" && typeof value !== "number") throw new Error(`${file}: ${name} must be a string`)
    return String(value)
  }
  const url = field("url", true)!
  if (!URL.canParse(url)) throw new Error(`${file}: url "${url}" is not a URL`)
  return { url: url.replace(/\/$/, ""), apiKey: field("apiKey", true)!, projectName: field("projectName", true)!, projectVersion: field("projectVersion", false) }
}

const problemText = async (response: Response): Promise<string> => {
  const text = await response.text()
  try {
    const body = JSON.parse(text) as { detail?: string; title?: string; errors?: ReadonlyArray<string> }
    return [body.detail ?? body.title ?? text, ...(body.errors ?? []).map((error) => `  ${error}`)].join("\n")
  } catch {
    return text
  }
}

export const uploadBom = async (options: {
  readonly config: UploadConfig
  readonly bom: string
  readonly wait: boolean
  readonly print: (line: string) => void
  readonly progress: (text: string) => void
}): Promise<string> => {
  const { config } = options
  const response = await fetch(`${config.url}/api/v1/bom`, {
    method: "PUT",
    headers: { "x-api-key": config.apiKey, "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      projectName: config.projectName,
      ...(config.projectVersion === undefined ? {} : { projectVersion: config.projectVersion }),
      autoCreate: true,
      bom: Buffer.from(options.bom, "utf8").toString("base64")
    })
  })
  if (!response.ok) throw new Error(`${config.url} refused the BOM (${response.status}): ${await problemText(response)}`)
  const { token } = await response.json() as { token: string }
  options.print(`token ${token}`)
  if (!options.wait) return token
  const deadline = Date.now() + 10 * 60_000
  for (;;) {
    const status = await fetch(`${config.url}/api/v1/bom/token/${token}`, { headers: { "x-api-key": config.apiKey } })
    if (!status.ok) throw new Error(`polling the token failed (${status.status}): ${await problemText(status)}`)
    const { processing } = await status.json() as { processing: boolean }
    if (!processing) break
    if (Date.now() > deadline) throw new Error("still processing after 10 minutes")
    options.progress(".")
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
  options.print(`processed: ${config.projectName}${config.projectVersion === undefined ? "" : ` ${config.projectVersion}`}`)
  return token
}
