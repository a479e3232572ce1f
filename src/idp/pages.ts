// The identity provider's HTML: a plain, accessible login form (labels, autocomplete, an error
// announced to screen readers), the sign-out question and the error page. No scripts, no fonts
// from elsewhere: the pages work offline and under a strict CSP.
import type { KoaContextWithOIDC } from "oidc-provider"

export const escapeHtml = (text: unknown): string =>
  String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const style = `body{font-family:system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d1f23}
main{max-width:22rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:6px;box-shadow:0 1px 3px #0003}
h1{font-size:1.4rem;margin:0 0 1.2rem}label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.55rem;font-size:1rem;border:1px solid #8a8f98;border-radius:4px}
input:focus,button:focus{outline:3px solid #2a6fdb;outline-offset:1px}
button{margin-top:1.2rem;width:100%;padding:.65rem;font-size:1rem;border:0;border-radius:4px;background:#2a6fdb;color:#fff;cursor:pointer}
button.secondary{background:#e3e6ea;color:#1d1f23}
.error{background:#fdecea;color:#8a1c13;padding:.6rem;border-radius:4px;margin-bottom:.8rem}
pre{white-space:pre-wrap;word-break:break-word}`

const page = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
  `<title>${escapeHtml(title)}</title><link rel="icon" href="data:,"><style>${style}</style></head><body><main>${body}</main></body></html>`

export interface LoginPageOptions {
  readonly realmName: string
  readonly clientName: string
  readonly action: string
  readonly username?: string | undefined
  readonly error?: string | undefined
}

export const loginPage = (options: LoginPageOptions): string =>
  page(
    `Sign in to ${options.realmName}`,
    `<h1>Sign in to ${escapeHtml(options.realmName)}</h1>` +
      `<p>to continue to ${escapeHtml(options.clientName)}</p>` +
      (options.error === undefined ? "" : `<p class="error" role="alert" id="login-error">${escapeHtml(options.error)}</p>`) +
      `<form method="post" action="${escapeHtml(options.action)}"${options.error === undefined ? "" : ` aria-describedby="login-error"`}>` +
      `<label for="username">Username or email</label>` +
      `<input id="username" name="username" autocomplete="username" required autofocus value="${escapeHtml(options.username ?? "")}">` +
      `<label for="password">Password</label>` +
      `<input id="password" name="password" type="password" autocomplete="current-password" required>` +
      `<button type="submit">Sign in</button></form>`
  )

export const messagePage = (title: string, message: string): string =>
  page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`)

export const errorPage = (realmName: string, out: Record<string, unknown>): string =>
  page(
    `${realmName}: sign-in error`,
    `<h1>Sign-in error</h1>` +
      `<p class="error" role="alert">${escapeHtml(out.error_description ?? out.error ?? "unknown error")}</p>` +
      (out.error === undefined ? "" : `<p>Code: <code>${escapeHtml(out.error)}</code></p>`)
  )

/** oidc-provider's logoutSource: `form` is its own hidden form (with the xsrf token) */
export const logoutPage = (realmName: string) => (ctx: KoaContextWithOIDC, form: string): void => {
  ctx.type = "html"
  ctx.body = page(
    `Sign out of ${realmName}`,
    `<h1>Sign out of ${escapeHtml(realmName)}?</h1>${form}` +
      `<button type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button>` +
      `<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>`
  )
}
