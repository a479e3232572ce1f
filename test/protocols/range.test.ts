// parseRange: one byte range per response (RFC 9110 §14); anything we do not serve is the whole body.
import t from "tap"
import { parseRange, type RangeRequest } from "../../src/protocols/range.ts"

const full: RangeRequest = { kind: "full" }
const unsatisfiable: RangeRequest = { kind: "unsatisfiable" }
const range = (start: number, end: number): RangeRequest => ({ kind: "range", start, end })

const cases: ReadonlyArray<readonly [label: string, header: string | undefined, size: number, expected: RangeRequest]> = [
  // no header or nothing we understand: the whole body
  ["no Range header", undefined, 1000, full],
  ["garbage header", "garbage", 1000, full],
  ["empty header", "", 1000, full],
  ["another unit", "items=0-1", 1000, full],
  ["bytes= with neither bound", "bytes=-", 1000, full],
  ["bytes= with nothing", "bytes=", 1000, full],
  ["non-digit bounds", "bytes=a-b", 1000, full],
  ["negative first", "bytes=-5-10", 1000, full],
  ["multi-range falls back to full", "bytes=0-1,5-9", 1000, full],
  ["multi-range with a suffix falls back to full", "bytes=0-0,-1", 1000, full],
  ["last < first is invalid, so full", "bytes=50-10", 1000, full],
  ["last < first beyond the size is still full", "bytes=2000-1500", 1000, full],

  // first-last
  ["full range spelled out", "bytes=0-999", 1000, range(0, 999)],
  ["first bytes", "bytes=0-99", 1000, range(0, 99)],
  ["single byte", "bytes=5-5", 1000, range(5, 5)],
  ["last byte", "bytes=999-999", 1000, range(999, 999)],
  ["end clamped to size - 1", "bytes=900-5000", 1000, range(900, 999)],
  ["end exactly size is clamped", "bytes=0-1000", 1000, range(0, 999)],
  ["whitespace and case are tolerated", "  BYTES = 10 - 19 ", 1000, range(10, 19)],
  ["leading zeros", "bytes=007-010", 1000, range(7, 10)],

  // open-ended
  ["open-ended", "bytes=100-", 1000, range(100, 999)],
  ["open-ended from 0", "bytes=0-", 1000, range(0, 999)],
  ["open-ended from the last byte", "bytes=999-", 1000, range(999, 999)],

  // suffix
  ["suffix", "bytes=-10", 1000, range(990, 999)],
  ["suffix of one byte", "bytes=-1", 1000, range(999, 999)],
  ["suffix equal to the size", "bytes=-1000", 1000, range(0, 999)],
  ["suffix longer than the body is clamped to the start", "bytes=-5000", 1000, range(0, 999)],
  ["suffix 0 is unsatisfiable", "bytes=-0", 1000, unsatisfiable],
  ["suffix 000 is unsatisfiable", "bytes=-000", 1000, unsatisfiable],

  // start beyond the size
  ["start equal to size is unsatisfiable", "bytes=1000-", 1000, unsatisfiable],
  ["start beyond size is unsatisfiable", "bytes=1500-", 1000, unsatisfiable],
  ["start beyond size with an end is unsatisfiable", "bytes=1500-1600", 1000, unsatisfiable],
  ["huge start is unsatisfiable", "bytes=99999999999999999999-", 1000, unsatisfiable],

  // size 0
  ["size 0: open-ended from 0", "bytes=0-", 0, unsatisfiable],
  ["size 0: 0-0", "bytes=0-0", 0, unsatisfiable],
  ["size 0: suffix", "bytes=-1", 0, unsatisfiable],
  ["size 0: suffix 0", "bytes=-0", 0, unsatisfiable],
  ["size 0: no header", undefined, 0, full],
  ["size 0: garbage", "garbage", 0, full],

  // size 1
  ["size 1: 0-0", "bytes=0-0", 1, range(0, 0)],
  ["size 1: suffix 5", "bytes=-5", 1, range(0, 0)],
  ["size 1: 1-", "bytes=1-", 1, unsatisfiable]
]

for (const [label, header, size, expected] of cases) {
  t.same(parseRange(header, size), expected, `${label}: ${JSON.stringify(header)} of ${size} bytes`)
}

t.test("every satisfiable range lies within the body", async (t) => {
  const headers = ["bytes=0-", "bytes=3-", "bytes=-1", "bytes=-3", "bytes=-100", "bytes=2-2", "bytes=1-100"]
  for (const size of [1, 3, 10]) {
    for (const header of headers) {
      const result = parseRange(header, size)
      if (result.kind !== "range") continue
      t.same(
        [result.start >= 0, result.start <= result.end, result.end <= size - 1],
        [true, true, true],
        `${header} of ${size} bytes → ${result.start}-${result.end}`
      )
    }
  }
})
