// The CLI's side of larder's REST API (also a Nexus's): basic auth, clear errors for an unreachable
// server and refused credentials, and the admin password from a file or LARDER_PASSWORD only.
import { readFileSync } from "node:fs"

export class CliError extends Error {}

export interface Connection {
  readonly url: string
  readonly user: string
  readonly password: string
}

export interface RestResponse {
  readonly status: number
  readonly text: string
}

export interface RestClient {
  /** `path` from the server's root, e.g. /service/rest/v1/repositories */
  readonly call: (method: string, path: string, body?: unknown) => Promise<RestResponse>
}

export const makeRestClient = (connection: Connection): RestClient => {
  const root = connection.url.replace(/\/+$/, "")
  const authorization = "Basic " + Buffer.from(`${connection.user}:${connection.password}`).toString("base64")
  return {
    call: async (method, path, body) => {
      let response: Response
      try {
        response = await fetch(root + path, {
          method,
          headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000)
        })
      } catch (error) {
        throw new CliError(`cannot reach ${connection.url}: ${(error as Error).cause ?? (error as Error).message}`)
      }
      if (response.status === 401) throw new CliError(`${connection.url} refused the credentials of "${connection.user}" (401)`)
      return { status: response.status, text: await response.text() }
    }
  }
}

/** the admin password: the file's first line, else LARDER_PASSWORD (never a flag value: it would show in ps) */
export const readPassword = (file: string | undefined): string => {
  if (file !== undefined) {
    try {
      return readFileSync(file, "utf8").trim()
    } catch (error) {
      throw new CliError(`--password-file ${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`)
    }
  }
  const fromEnv = process.env.LARDER_PASSWORD
  if (fromEnv === undefined || fromEnv === "") throw new CliError("no password: pass --password-file FILE or set LARDER_PASSWORD")
  return fromEnv
}
