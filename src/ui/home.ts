// The web UI's first page: each repository with its upstream, state, cache results and hit ratio,
// and what the blob store holds. Server-rendered HTML, no script; served on the web listener.
import type { Repository } from "../../appliance/config/Repository.ts"
import type { Metrics } from "../admin/Metrics.ts"
import { cacheResults, formatRatio, hitRatio } from "../admin/hitRatio.ts"

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const formatBytes = (bytes: number) => {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"]
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`
}


export const renderHome = async (
  repositories: ReadonlyArray<Repository>,
  metrics: Metrics["Service"],
  stats: { readonly blobs: number; readonly bytes: number; readonly evictions: number; readonly evictedBytes: number },
  quotaBytes?: number | undefined
): Promise<string> => {
  const counts = new Map<string, Record<string, number>>()
  for (const sample of (await metrics.cacheRequests.get()).values) {
    const name = String(sample.labels.repository)
    const row = counts.get(name) ?? {}
    row[String(sample.labels.result)] = sample.value
    counts.set(name, row)
  }
  const rows = repositories.map((repository) => {
    const row = counts.get(repository.name) ?? {}
    const { ratio } = hitRatio(row)
    const percent = formatRatio(ratio)
    return `<tr>
      <td><code>${escapeHtml(repository.name)}</code></td>
      <td>${repository.format}</td>
      <td>${repository.online ? "online" : "<strong>offline</strong>"}</td>
      <td>${repository.proxy.remoteUrl === "" ? "<em>not set</em>" : escapeHtml(repository.proxy.remoteUrl)}</td>
      ${cacheResults.map((result) => `<td class="n">${row[result] ?? 0}</td>`).join("")}
      <td><meter min="0" max="1" value="${ratio ?? 0}" title="${percent}"></meter> ${percent}</td>
    </tr>`
  })
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>larder</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.4 system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse}td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}meter{width:6rem}
</style></head><body>
<h1>larder</h1>
<p>Blob store: <strong>${stats.blobs}</strong> blobs, <strong>${formatBytes(stats.bytes)}</strong>${
    quotaBytes === undefined
      ? " (no quota)"
      : ` of a <strong>${formatBytes(quotaBytes)}</strong> quota <meter min="0" max="1" value="${Math.min(1, stats.bytes / quotaBytes).toFixed(3)}"></meter> ${
        ((stats.bytes / quotaBytes) * 100).toFixed(1)
      }%; ${stats.evictions} evicted since start (${formatBytes(stats.evictedBytes)})`
  }.
Pull through <code>/repository/&lt;name&gt;/</code>; metrics at <code>/service/rest/metrics/prometheus</code>.</p>
<p>Also on this listener: the <a href="/sbom/">SBOM intake</a> (Dependency-Track's <code>/api/v1</code>), the identity
provider's realms under <code>/auth/realms/</code>, and the SSO gate under <code>/oauth2/</code> (<a href="/ready">ready?</a>).</p>
<table>
<thead><tr><th>repository</th><th>format</th><th>state</th><th>upstream</th>
${cacheResults.map((result) => `<th>${result}</th>`).join("")}<th>served without upstream</th></tr></thead>
<tbody>${rows.join("\n")}</tbody>
</table>
</body></html>
`
}
