// A PyPI fixture: real distributions built here (a wheel, and an sdist whose in-tree PEP 517
// backend builds its wheel with nothing but the standard library, so pip needs no setuptools from
// the index), a simple index in PEP 503 HTML and PEP 691 JSON, and files on a second host.
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { tempDir } from "./appliance.ts"
import type { Upstream } from "./upstream.ts"

const run = promisify(execFile)

// writes a wheel: the package's files plus dist-info (METADATA, WHEEL, RECORD with hashes)
const wheelWriter = `
import base64, hashlib, zipfile
def write_wheel(path, name, version, files):
    dist = f"{name}-{version}.dist-info"
    files = dict(files)
    files[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n"
    files[f"{dist}/WHEEL"] = "Wheel-Version: 1.0\\nGenerator: larder-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, c in files.items():
            data = c.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{n},sha256={digest},{len(data)}")
            z.writestr(n, data)
        record.append(f"{dist}/RECORD,,")
        z.writestr(f"{dist}/RECORD", "\\n".join(record) + "\\n")
`

export interface Distribution {
  readonly filename: string
  readonly bytes: Buffer
  readonly sha256: string
}

const distribution = async (filename: string, path: string): Promise<Distribution> => {
  const bytes = await readFile(path)
  return { filename, bytes, sha256: createHash("sha256").update(bytes).digest("hex") }
}

/** a pure-Python wheel whose module returns `value` from `answer()` */
export const buildWheel = async (name: string, version: string, value: string): Promise<Distribution> => {
  const dir = tempDir("larder-wheel-")
  try {
    const filename = `${name}-${version}-py3-none-any.whl`
    const files = { [`${name}/__init__.py`]: `def answer():\n    return ${JSON.stringify(value)}\n` }
    await run("python3", ["-c", `${wheelWriter}\nimport json, sys\nwrite_wheel(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))`, join(dir, filename), name, version, JSON.stringify(files)])
    return await distribution(filename, join(dir, filename))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** an sdist with an in-tree build backend (pyproject `backend-path`), so building needs no index */
export const buildSdist = async (name: string, version: string, value: string): Promise<Distribution> => {
  const dir = tempDir("larder-sdist-")
  try {
    const root = `${name}-${version}`
    const files: Record<string, string> = {
      "PKG-INFO": `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`,
      "pyproject.toml": `[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n`,
      [`${name}/__init__.py`]: `def answer():\n    return ${JSON.stringify(value)}\n`,
      "backend.py": `${wheelWriter}
import os
NAME, VERSION = ${JSON.stringify(name)}, ${JSON.stringify(version)}
def _sources():
    out = {}
    for folder, _, names in os.walk(NAME):
        for n in names:
            if n.endswith(".py"):
                p = os.path.join(folder, n)
                out[p] = open(p).read()
    return out
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    filename = f"{NAME}-{VERSION}-py3-none-any.whl"
    write_wheel(os.path.join(wheel_directory, filename), NAME, VERSION, _sources())
    return filename
def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("not needed")
`
    }
    for (const [path, content] of Object.entries(files)) {
      const full = join(dir, root, path)
      await run("mkdir", ["-p", join(full, "..")])
      await writeFile(full, content)
    }
    const filename = `${root}.tar.gz`
    await run("tar", ["-czf", join(dir, filename), "-C", dir, root])
    return await distribution(filename, join(dir, filename))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * Serves project pages on `index` (HTML, or JSON when asked) listing files served by `files`
 * under /packages/<project>/; `listedSha256` overrides the hash a page publishes for a file.
 */
export const serveProject = (
  index: Upstream,
  files: Upstream,
  project: string,
  distributions: ReadonlyArray<Distribution>,
  listedSha256: Record<string, string> = {}
) => {
  const entries = distributions.map((dist) => {
    files.routes.set(`/packages/${project}/${dist.filename}`, { body: dist.bytes })
    return { dist, url: `${files.url}/packages/${project}/${dist.filename}`, sha: listedSha256[dist.filename] ?? dist.sha256 }
  })
  const html = `<!DOCTYPE html>\n<html><body>\n` +
    entries.map(({ dist, url, sha }) => `<a href="${url}#sha256=${sha}" data-requires-python="&gt;=3.7">${dist.filename}</a><br/>`).join("\n") +
    `\n</body></html>\n`
  const json = JSON.stringify({
    meta: { "api-version": "1.0" },
    name: project,
    files: entries.map(({ dist, url, sha }) => ({ filename: dist.filename, url, hashes: { sha256: sha }, "requires-python": ">=3.7" }))
  })
  const htmlRoute = { body: html, headers: { "content-type": "application/vnd.pypi.simple.v1+html", etag: `"h-${project}"` } }
  const jsonRoute = { body: json, headers: { "content-type": "application/vnd.pypi.simple.v1+json", etag: `"j-${project}"` } }
  // as PyPI does: JSON when the client lists it first
  index.routes.set(`/simple/${project}/`, {
    ...htmlRoute,
    negotiate: (accept) => (accept?.startsWith("application/vnd.pypi.simple.v1+json") ? jsonRoute : htmlRoute)
  })
}
