// HTTP Range requests (RFC 9110 §14): one byte range per response; several ranges or a syntax we do
// not serve fall back to the whole content, which the RFC allows.

export type RangeRequest =
  | { readonly kind: "full" }
  | { readonly kind: "range"; readonly start: number; readonly end: number }
  | { readonly kind: "unsatisfiable" }

export const parseRange = (header: string | undefined, size: number): RangeRequest => {
  if (header === undefined) return { kind: "full" }
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header)
  if (match === null) return { kind: "full" }
  const [, first, last] = match
  if (first === "" && last === "") return { kind: "full" }
  if (first === "") {
    const suffix = Number(last)
    if (suffix === 0) return { kind: "unsatisfiable" }
    return size === 0 ? { kind: "unsatisfiable" } : { kind: "range", start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1)
  if (start >= size || (last !== "" && Number(last) < start)) return last !== "" && Number(last) < start ? { kind: "full" } : { kind: "unsatisfiable" }
  return { kind: "range", start, end }
}
