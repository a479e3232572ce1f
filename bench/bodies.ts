// Artifact bodies of a given size. A short random pattern repeated: incompressible enough that
// no layer can shrink it, and cheap to make at 1 GiB without extra copies.
import { randomFillSync } from "node:crypto"

export const KiB = 1024
export const MiB = 1024 * KiB
export const GiB = 1024 * MiB

export const patternBody = (bytes: number): Buffer => {
  const pattern = randomFillSync(Buffer.allocUnsafe(Math.min(bytes, 64 * KiB)))
  return Buffer.allocUnsafe(bytes).fill(pattern)
}
