// Sizes as people write them: 50GiB, 500MB, 1.5TiB, 1048576. Binary (KiB, MiB...) and decimal
// (KB, MB...) units; "" or "0" mean no limit.
const units: Record<string, number> = {
  "": 1, b: 1,
  kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12,
  kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40,
  k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40
}

/** bytes, or undefined for no limit; throws with the accepted forms */
export const parseByteSize = (text: string): number | undefined => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text)
  const unit = match?.[2].toLowerCase()
  if (match === null || unit === undefined || !(unit in units)) {
    throw new Error(`"${text}" is not a size; write it like 50GiB, 500MB or 1048576 (bytes)`)
  }
  const bytes = Math.floor(Number(match[1]) * units[unit])
  return bytes === 0 ? undefined : bytes
}
