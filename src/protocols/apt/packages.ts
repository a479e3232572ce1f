// Reading Packages indexes for the checksums of the packages they list: decompressed by their
// magic bytes (gzip and zstd in-process, xz through xz-utils), streamed stanza by stanza, so a
// 100 MB index never sits in memory. Files that are not Packages indexes (by-hash copies of
// Translation or Contents files look the same from outside) are recognised by their first line
// and left unread.
import { spawn } from "node:child_process"
import { createReadStream } from "node:fs"
import { open } from "node:fs/promises"
import { createInterface } from "node:readline"
import type { Readable } from "node:stream"
import * as zlib from "node:zlib"
import { checkDecodedPath, upstreamUrl } from "../path.ts"
import type { Link } from "../route.ts"
import { hexDigest } from "../links.ts"

export interface Stanza {
  readonly filename: string
  readonly size: number | undefined
  readonly sha256: string | undefined
}

/** the Filename, Size and SHA256 of each stanza, from lines of a Packages file */
export const parseStanzas = async function*(lines: AsyncIterable<string>): AsyncGenerator<Stanza> {
  let fields = new Map<string, string>()
  const flush = function*() {
    const filename = fields.get("filename")
    if (filename !== undefined) {
      const size = fields.has("size") ? Number(fields.get("size")) : undefined
      yield { filename, size: Number.isSafeInteger(size) ? size : undefined, sha256: fields.get("sha256") }
    }
    fields = new Map()
  }
  for await (const line of lines) {
    if (line.trim() === "") {
      yield* flush()
      continue
    }
    if (line.startsWith(" ") || line.startsWith("\t")) continue // continuation of a multi-line field
    const colon = line.indexOf(":")
    if (colon > 0) fields.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim())
  }
  yield* flush()
}

type Compression = "gzip" | "xz" | "zstd" | "bzip2" | "plain"

export const compressionOf = (head: Buffer): Compression =>
  head[0] === 0x1f && head[1] === 0x8b
    ? "gzip"
    : head.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))
    ? "xz"
    : head.subarray(0, 4).equals(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]))
    ? "zstd"
    : head.subarray(0, 3).toString("latin1") === "BZh"
    ? "bzip2"
    : "plain"

const decompressed = (file: string, compression: Compression): { stream: Readable; stop: () => void } | undefined => {
  const source = createReadStream(file)
  switch (compression) {
    case "plain":
      return { stream: source, stop: () => source.destroy() }
    case "gzip": {
      const stream = source.pipe(zlib.createGunzip())
      return { stream, stop: () => (source.destroy(), stream.destroy()) }
    }
    case "zstd": {
      const stream = source.pipe(zlib.createZstdDecompress())
      return { stream, stop: () => (source.destroy(), stream.destroy()) }
    }
    case "xz":
    case "bzip2": {
      source.destroy()
      const child = spawn(compression === "xz" ? "xz" : "bzip2", ["-dc", file], { stdio: ["ignore", "pipe", "ignore"] })
      child.on("error", () => undefined) // tool missing: the stream just ends and no links are read
      return { stream: child.stdout, stop: () => child.kill() }
    }
  }
}

/**
 * Links for every package a Packages file lists (at `file`, whatever its compression); [] for a
 * file that is not a Packages index. Filenames are relative to `root` below the repository.
 */
export const packagesLinks = async (file: string, root: string, remoteUrl: string): Promise<Array<Link>> => {
  const handle = await open(file, "r")
  const head = Buffer.alloc(6)
  try {
    await handle.read(head, 0, 6, 0)
  } finally {
    await handle.close()
  }
  const source = decompressed(file, compressionOf(head))
  if (source === undefined) return []
  const links: Array<Link> = []
  const lines = createInterface({ input: source.stream, crlfDelay: Infinity })
  try {
    let first = true
    for await (const stanza of parseStanzas((async function*() {
      for await (const line of lines) {
        if (first) {
          first = false
          if (!line.startsWith("Package:")) return
        }
        yield line
      }
    })())) {
      const key = root === "" ? stanza.filename.replace(/^\.\//, "") : `${root}/${stanza.filename.replace(/^\.\//, "")}`
      if (checkDecodedPath(key) !== undefined) continue
      const digest = stanza.sha256 === undefined ? undefined : hexDigest("sha256", stanza.sha256)
      links.push({ key, url: upstreamUrl(remoteUrl, key), digest, size: stanza.size })
    }
  } finally {
    lines.close()
    source.stop()
  }
  return links
}
