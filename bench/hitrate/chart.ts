// A small SVG line chart: byte hit rate against quota, one line per policy, Belady dashed.
export interface Series {
  readonly name: string
  readonly points: ReadonlyArray<readonly [x: number, y: number]>
  readonly dashed?: boolean
}

const colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#555555", "#9467bd"]
const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;")

export const lineChart = (title: string, xLabel: string, yLabel: string, xs: ReadonlyArray<number>, series: ReadonlyArray<Series>): string => {
  const width = 760
  const height = 400
  const left = 60
  const right = 230
  const top = 40
  const bottom = 50
  const plotW = width - left - right
  const plotH = height - top - bottom
  const xMin = Math.min(...xs)
  const xMax = Math.max(...xs)
  const px = (x: number) => left + ((x - xMin) / (xMax - xMin)) * plotW
  const py = (y: number) => top + plotH - (y / 100) * plotH
  const grid = [0, 20, 40, 60, 80, 100].map((y) =>
    `<line x1="${left}" y1="${py(y)}" x2="${left + plotW}" y2="${py(y)}" stroke="#ddd"/><text x="${left - 8}" y="${py(y) + 4}" text-anchor="end" font-size="12">${y}%</text>`
  )
  const ticks = xs.map((x) => `<text x="${px(x)}" y="${top + plotH + 18}" text-anchor="middle" font-size="12">${x}%</text>`)
  const lines = series.map((s, i) => {
    const color = colors[i % colors.length]
    const path = s.points.map(([x, y], j) => `${j === 0 ? "M" : "L"}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ")
    const dots = s.points.map(([x, y]) => `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${color}"/>`).join("")
    const legendY = top + 10 + i * 20
    return `<path d="${path}" fill="none" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ""}/>${dots}` +
      `<line x1="${left + plotW + 15}" y1="${legendY}" x2="${left + plotW + 40}" y2="${legendY}" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ""}/>` +
      `<text x="${left + plotW + 45}" y="${legendY + 4}" font-size="12">${escape(s.name)}</text>`
  })
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="${left}" y="22" font-size="15" font-weight="bold">${escape(title)}</text>
${grid.join("\n")}
${ticks.join("\n")}
<text x="${left + plotW / 2}" y="${height - 10}" text-anchor="middle" font-size="12">${escape(xLabel)}</text>
<text x="16" y="${top + plotH / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 16 ${top + plotH / 2})">${escape(yLabel)}</text>
${lines.join("\n")}
</svg>
`
}
