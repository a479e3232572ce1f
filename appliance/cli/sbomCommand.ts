// `larder sbom generate` (Kubernetes manifests to a CycloneDX 1.4 SBOM) and `larder sbom upload`
// (to larder's or Dependency-Track's /api/v1/bom, with the API key from a config file).
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Argument, Command, Flag } from "effect/cli"
import { generateSbom, imagesOfManifests, parseManifestText } from "../../src/sbom/generate.ts"
import { orUndefined, runAction } from "./action.ts"
import { readUploadConfig, uploadBom } from "./sbomUpload.ts"

const manifestFile = /\.(ya?ml|json)$/i

/** files named, directories walked for .yaml/.yml/.json (sorted, so output does not depend on the filesystem) */
const manifestTexts = (paths: ReadonlyArray<string>): Array<{ source: string; text: string }> => {
  if (paths.length === 0 || (paths.length === 1 && paths[0] === "-")) return [{ source: "stdin", text: readFileSync(0, "utf8") }]
  const texts: Array<{ source: string; text: string }> = []
  const visit = (path: string) => {
    const stat = statSync(path)
    if (stat.isDirectory()) {
      for (const name of readdirSync(path).sort()) {
        const child = join(path, name)
        if (statSync(child).isDirectory() || manifestFile.test(name)) visit(child)
      }
    } else {
      texts.push({ source: path, text: readFileSync(path, "utf8") })
    }
  }
  for (const path of paths) visit(path)
  return texts
}

const readStdin = () => readFileSync(0, "utf8")

const generate = Command.make("generate", {
  paths: Argument.String("paths").pipe(Argument.withDescription("Manifest files or directories (YAML, JSON, kubectl get -A -o json); none or - reads stdin"), Argument.variadic()),
  name: Flag.String("name").pipe(Flag.withDescription("Name of the SBOM's subject (metadata component)"), Flag.optional),
  version: Flag.String("version").pipe(Flag.withDescription("Version of the SBOM's subject"), Flag.optional),
  output: Flag.String("output").pipe(Flag.withDescription("Write the SBOM to this file instead of stdout"), Flag.optional)
}, (options) =>
  runAction("sbom generate", async () => {
    const documents = manifestTexts(options.paths).flatMap(({ source, text }) => parseManifestText(text, source))
    const { images, skipped } = imagesOfManifests(documents)
    const sbom = generateSbom(images, { name: orUndefined(options.name), version: orUndefined(options.version) })
    const output = orUndefined(options.output)
    if (output === undefined) process.stdout.write(sbom.endsWith("\n") ? sbom : `${sbom}\n`)
    else writeFileSync(output, sbom.endsWith("\n") ? sbom : `${sbom}\n`)
    const workloads = new Set(images.flatMap((image) => image.usedBy.map((use) => use.replace(/ \(.*\)$/, ""))))
    console.error(`${images.length} distinct images from ${workloads.size} workloads${skipped.length === 0 ? "" : `; ${skipped.length} other objects skipped`}${output === undefined ? "" : `; written to ${output}`}`)
  })).pipe(Command.withDescription("Turn Kubernetes workloads into a CycloneDX 1.4 SBOM: one container component per distinct image"))

const upload = Command.make("upload", {
  config: Flag.String("config").pipe(Flag.withDescription("YAML/JSON file (mode 0600) with url, apiKey, projectName, projectVersion")),
  bom: Flag.String("bom").pipe(Flag.withDescription("The CycloneDX JSON file to upload (default: stdin)"), Flag.optional),
  wait: Flag.Boolean("wait").pipe(Flag.withDescription("Poll until the server has processed the BOM"), Flag.withDefault(false))
}, (options) =>
  runAction("sbom upload", async () => {
    const config = readUploadConfig(options.config, (line) => console.error(line))
    const file = orUndefined(options.bom)
    await uploadBom({
      config,
      bom: file === undefined ? readStdin() : readFileSync(file, "utf8"),
      wait: options.wait,
      print: (line) => console.log(line),
      progress: (text) => process.stderr.write(text)
    })
  })).pipe(Command.withDescription("Upload a BOM with autoCreate; the API key comes from --config, never from the command line"))

export const sbomCommand = Command.make("sbom").pipe(
  Command.withDescription("Generate CycloneDX SBOMs from Kubernetes workloads and upload them"),
  Command.withSubcommands([generate, upload])
)
