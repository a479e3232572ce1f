import t from "tap"
import { parseRange } from "../../src/protocols/range.ts"

const size = 1000
const cases = [
  [undefined, { kind: "full" }],
  ["bytes=0-99", { kind: "range", start: 0, end: 99 }],
  ["bytes=100-", { kind: "range", start: 100, end: 999 }],
  ["bytes=-10", { kind: "range", start: 990, end: 999 }],
  ["bytes=-5000", { kind: "range", start: 0, end: 999 }],
  ["bytes=900-5000", { kind: "range", start: 900, end: 999 }],
  ["bytes=999-999", { kind: "range", start: 999, end: 999 }],
  ["bytes=1000-", { kind: "unsatisfiable" }],
  ["bytes=-0", { kind: "unsatisfiable" }],
  ["bytes=50-10", { kind: "full" }],
  ["bytes=0-1,5-9", { kind: "full" }],
  ["items=0-1", { kind: "full" }],
  ["bytes=-", { kind: "full" }],
  ["garbage", { kind: "full" }]
] as const
for (const [header, expected] of cases) t.same(parseRange(header, size), expected, String(header))

t.same(parseRange("bytes=0-", 0), { kind: "unsatisfiable" }, "any range of an empty body")
t.same(parseRange("bytes=-1", 0), { kind: "unsatisfiable" }, "a suffix of an empty body")
