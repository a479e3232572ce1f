// Writes OCI image layouts (oci-layout, index.json, blobs/sha256/…) fully offline, for the
// container-image proxy tests: a single-platform image with N gzip'd tar layers, or a multi-arch
// image index over several such images (Docker schema 2 media types on request, as a skopeo dir:). Every byte derives from a seed, so the same seed gives the
// same digests; without one, each call gets a fresh random seed (distinct blobs per test).
import { createHash, randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { gzipSync } from "node:zlib"

export const mediaTypes = {
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociConfig: "application/vnd.oci.image.config.v1+json",
  ociLayerGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  dockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerConfig: "application/vnd.docker.container.image.v1+json",
  dockerLayerGzip: "application/vnd.docker.image.rootfs.diff.tar.gzip"
} as const

export interface Platform {
  readonly os: string
  readonly architecture: string
  readonly variant?: string
}

export interface Descriptor {
  readonly mediaType: string
  readonly digest: string
  readonly size: number
  readonly platform?: Platform
  readonly annotations?: Record<string, string>
}

export interface BuiltLayer {
  /** sha256 of the compressed blob: what the manifest and the registry's blob URL use */
  readonly digest: string
  /** sha256 of the uncompressed tar: what the config's rootfs.diff_ids lists */
  readonly diffId: string
  readonly size: number
  readonly mediaType: string
  /** path of the one file inside the tar */
  readonly fileName: string
  /** the file's bytes */
  readonly content: Buffer
  /** the compressed blob as stored */
  readonly blob: Buffer
}

export interface BuiltImage {
  readonly platform: Platform
  readonly manifestDigest: string
  readonly manifestMediaType: string
  /** the exact manifest bytes (their sha256 is manifestDigest) */
  readonly manifest: Buffer
  readonly configDigest: string
  readonly config: Buffer
  readonly layers: ReadonlyArray<BuiltLayer>
  /** manifest, config and layer digests */
  readonly blobDigests: ReadonlyArray<string>
}

export interface BuiltIndex {
  readonly indexDigest: string
  readonly indexMediaType: string
  /** the exact index bytes (their sha256 is indexDigest) */
  readonly index: Buffer
  readonly images: ReadonlyArray<BuiltImage>
}

export interface ImageLayout extends BuiltImage {
  readonly dir: string
  readonly tag: string
  /** the top-level digest the tag points at (= manifestDigest) */
  readonly digest: string
  /** the skopeo source reference: `oci:<dir>:<tag>`, or `dir:<dir>` for the docker flavour */
  readonly ref: string
}

export interface IndexLayout extends BuiltIndex {
  readonly dir: string
  readonly tag: string
  /** the top-level digest the tag points at (= indexDigest) */
  readonly digest: string
  readonly ref: string
}

export interface ImageOptions {
  /** every byte derives from it; default: a fresh random seed */
  readonly seed?: string
  /** number of layers; default 2 */
  readonly layers?: number
  /** bytes of the random file inside each layer; default 1024 */
  readonly layerFileSize?: number
  /** the tag written as org.opencontainers.image.ref.name; default "latest" */
  readonly tag?: string
  /** default linux/amd64 */
  readonly platform?: Platform
  /**
   * "oci" (default): OCI media types in an OCI image layout (ref `oci:<dir>:<tag>`).
   * "docker": Docker schema 2 media types; skopeo's oci: transport only reads OCI media types, so
   * these go into a skopeo `dir:` directory instead (ref `dir:<dir>`, one image per directory, no tag).
   */
  readonly flavour?: "oci" | "docker"
}

export interface IndexOptions extends Omit<ImageOptions, "platform"> {
  /** default linux/amd64 and linux/arm64 */
  readonly platforms?: ReadonlyArray<Platform>
}

export const sha256Digest = (bytes: Buffer | string): string =>
  "sha256:" + createHash("sha256").update(bytes).digest("hex")

/** Path of a blob inside a layout. */
export const blobPath = (dir: string, digest: string): string => {
  const [algorithm, hex] = digest.split(":")
  return join(dir, "blobs", algorithm, hex)
}

/** Deterministic byte stream: sha256(seed | label | counter) blocks. */
const seededBytes = (seed: string, label: string, length: number): Buffer => {
  const out = Buffer.alloc(length)
  for (let offset = 0, counter = 0; offset < length; counter++) {
    const block = createHash("sha256").update(`${seed}\0${label}\0${counter}`).digest()
    offset += block.copy(out, offset)
  }
  return out
}

const FIXED_MTIME = 1_700_000_000

/** A ustar archive holding one regular file (512-byte header, data padded to 512, two zero blocks). */
export const ustar = (name: string, content: Buffer, mtime = FIXED_MTIME): Buffer => {
  if (Buffer.byteLength(name) > 100) throw new Error(`tar entry name too long for this writer: ${name}`)
  const header = Buffer.alloc(512)
  const field = (offset: number, length: number, value: string) => header.write(value, offset, length, "ascii")
  const octal = (offset: number, length: number, value: number) =>
    field(offset, length, value.toString(8).padStart(length - 1, "0") + "\0")
  field(0, 100, name)
  octal(100, 8, 0o644) // mode
  octal(108, 8, 0) // uid
  octal(116, 8, 0) // gid
  octal(124, 12, content.length) // size
  octal(136, 12, mtime)
  field(148, 8, "        ") // checksum placeholder: eight spaces
  field(156, 1, "0") // regular file
  field(257, 6, "ustar\0")
  field(263, 2, "00")
  field(265, 32, "root")
  field(297, 32, "root")
  let sum = 0
  for (const byte of header) sum += byte
  field(148, 8, sum.toString(8).padStart(6, "0") + "\0 ")
  const padding = Buffer.alloc((512 - (content.length % 512)) % 512)
  return Buffer.concat([header, content, padding, Buffer.alloc(1024)])
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value))

/** Builds the blobs of one image in memory; `write` stores them. */
export const buildImage = (options: ImageOptions & { readonly seed: string }): { image: BuiltImage; blobs: Map<string, Buffer> } => {
  const flavour = options.flavour ?? "oci"
  const types =
    flavour === "oci"
      ? { manifest: mediaTypes.ociManifest, config: mediaTypes.ociConfig, layer: mediaTypes.ociLayerGzip }
      : { manifest: mediaTypes.dockerManifest, config: mediaTypes.dockerConfig, layer: mediaTypes.dockerLayerGzip }
  const platform = options.platform ?? { os: "linux", architecture: "amd64" }
  const platformLabel = [platform.os, platform.architecture, platform.variant].filter(Boolean).join("/")
  const blobs = new Map<string, Buffer>()
  const layers: Array<BuiltLayer> = []
  for (let i = 0; i < (options.layers ?? 2); i++) {
    const label = `${platformLabel}/layer-${i}`
    const fileName = `larder-fixture/${platform.architecture}-layer-${i}.bin`
    const content = seededBytes(options.seed, label, options.layerFileSize ?? 1024)
    const tar = ustar(fileName, content)
    const blob = gzipSync(tar, { level: 6 })
    const digest = sha256Digest(blob)
    blobs.set(digest, blob)
    layers.push({ digest, diffId: sha256Digest(tar), size: blob.length, mediaType: types.layer, fileName, content, blob })
  }
  const config = json({
    created: new Date(FIXED_MTIME * 1000).toISOString(),
    architecture: platform.architecture,
    ...(platform.variant === undefined ? {} : { variant: platform.variant }),
    os: platform.os,
    config: { Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], Cmd: ["/bin/sh"] },
    rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
    history: layers.map((_, i) => ({
      created: new Date(FIXED_MTIME * 1000).toISOString(),
      created_by: `larder fixture layer ${i} (seed ${options.seed})`
    }))
  })
  const configDigest = sha256Digest(config)
  blobs.set(configDigest, config)
  const manifest = json({
    schemaVersion: 2,
    mediaType: types.manifest,
    config: { mediaType: types.config, digest: configDigest, size: config.length },
    layers: layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.size }))
  })
  const manifestDigest = sha256Digest(manifest)
  blobs.set(manifestDigest, manifest)
  return {
    image: {
      platform,
      manifestDigest,
      manifestMediaType: types.manifest,
      manifest,
      configDigest,
      config,
      layers,
      blobDigests: [manifestDigest, configDigest, ...layers.map((l) => l.digest)]
    },
    blobs
  }
}

/**
 * Stores blobs in `dir` (creating the layout if needed) and points `tag` at `top` in index.json,
 * replacing an earlier descriptor with the same tag; other tags stay, so one layout can hold several.
 */
const writeLayout = async (dir: string, blobs: Map<string, Buffer>, top: Descriptor, tag: string): Promise<void> => {
  await mkdir(join(dir, "blobs", "sha256"), { recursive: true })
  await writeFile(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }))
  for (const [digest, bytes] of blobs) await writeFile(blobPath(dir, digest), bytes)
  const indexFile = join(dir, "index.json")
  const refName = "org.opencontainers.image.ref.name"
  const existing: Array<Descriptor> = existsSync(indexFile)
    ? (JSON.parse(await readFile(indexFile, "utf8")) as { manifests: Array<Descriptor> }).manifests
    : []
  const manifests = [
    ...existing.filter((d) => d.annotations?.[refName] !== tag),
    { ...top, annotations: { [refName]: tag } }
  ]
  await writeFile(indexFile, JSON.stringify({ schemaVersion: 2, mediaType: mediaTypes.ociIndex, manifests }))
}

/**
 * skopeo's `dir:` transport (version 1.1): manifest.json, other manifests (list instances) as
 * <hex>.manifest.json, blobs as <hex>. It takes any manifest type, so it carries the docker flavour.
 */
const writeDirTransport = async (dir: string, blobs: Map<string, Buffer>, top: string, instances: ReadonlyArray<string>) => {
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, "version"), "Directory Transport Version: 1.1\n")
  for (const [digest, bytes] of blobs) {
    const hex = digest.split(":")[1]
    const name = digest === top ? "manifest.json" : instances.includes(digest) ? `${hex}.manifest.json` : hex
    await writeFile(join(dir, name), bytes)
  }
}

const freshSeed = () => randomBytes(8).toString("hex")

/** Writes a single-platform image into the OCI layout `dir` under `options.tag` (default "latest"). */
export const writeImageLayout = async (dir: string, options: ImageOptions = {}): Promise<ImageLayout> => {
  const seed = options.seed ?? freshSeed()
  const tag = options.tag ?? "latest"
  const { image, blobs } = buildImage({ ...options, seed })
  if (options.flavour === "docker") {
    await writeDirTransport(dir, blobs, image.manifestDigest, [])
    return { ...image, dir, tag, digest: image.manifestDigest, ref: `dir:${dir}` }
  }
  await writeLayout(dir, blobs, { mediaType: image.manifestMediaType, digest: image.manifestDigest, size: image.manifest.length }, tag)
  return { ...image, dir, tag, digest: image.manifestDigest, ref: `oci:${dir}:${tag}` }
}

/**
 * Writes a multi-arch image index (default linux/amd64 + linux/arm64, each image with its own
 * layers) into the OCI layout `dir` under `options.tag` (default "latest").
 */
export const writeIndexLayout = async (dir: string, options: IndexOptions = {}): Promise<IndexLayout> => {
  const seed = options.seed ?? freshSeed()
  const tag = options.tag ?? "latest"
  const platforms = options.platforms ?? [
    { os: "linux", architecture: "amd64" },
    { os: "linux", architecture: "arm64" }
  ]
  const blobs = new Map<string, Buffer>()
  const images: Array<BuiltImage> = []
  for (const platform of platforms) {
    const built = buildImage({ ...options, seed, platform })
    for (const [digest, bytes] of built.blobs) blobs.set(digest, bytes)
    images.push(built.image)
  }
  const indexMediaType = options.flavour === "docker" ? mediaTypes.dockerManifestList : mediaTypes.ociIndex
  const index = json({
    schemaVersion: 2,
    mediaType: indexMediaType,
    manifests: images.map((image) => ({
      mediaType: image.manifestMediaType,
      digest: image.manifestDigest,
      size: image.manifest.length,
      platform: image.platform
    }))
  })
  const indexDigest = sha256Digest(index)
  blobs.set(indexDigest, index)
  const built = { indexDigest, indexMediaType, index, images, dir, tag, digest: indexDigest }
  if (options.flavour === "docker") {
    await writeDirTransport(dir, blobs, indexDigest, images.map((image) => image.manifestDigest))
    return { ...built, ref: `dir:${dir}` }
  }
  await writeLayout(dir, blobs, { mediaType: indexMediaType, digest: indexDigest, size: index.length }, tag)
  return { ...built, ref: `oci:${dir}:${tag}` }
}
