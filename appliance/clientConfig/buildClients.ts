// Settings for the package clients on build agents, each the file that client reads: npm's .npmrc,
// pip's pip.conf, cargo's config.toml (cargo reads a file, not an env var) and a go env file.
import { stringify as toToml } from "smol-toml"
import { repositoryUrl, type LanHost } from "./lanHost.ts"

export interface ConfigFile {
  readonly name: string
  readonly text: string
  /** where the client looks for it */
  readonly installHint: string
}

export const npmConfig = (lan: LanHost): ConfigFile => ({
  name: ".npmrc",
  text: `; npm through larder, written by \`larder client-config npm\`\nregistry=${repositoryUrl(lan, "npm-proxy")}\n`,
  installHint: "~/.npmrc, a project's .npmrc, or NPM_CONFIG_USERCONFIG=<file>"
})

export const pipConfig = (lan: LanHost): ConfigFile => ({
  name: "pip.conf",
  text: [
    "# pip through larder, written by `larder client-config pip`",
    "[global]",
    `index-url = ${repositoryUrl(lan, "pypi-proxy")}simple/`,
    // pip ignores a plain-http index unless its host is trusted
    `trusted-host = ${lan.host}`,
    ""
  ].join("\n"),
  installHint: "/etc/pip.conf, ~/.config/pip/pip.conf, or PIP_CONFIG_FILE=<file>"
})

// no ",direct": a module larder cannot serve fails loudly instead of being fetched around it
export const goConfig = (lan: LanHost): ConfigFile => ({
  name: "go.env",
  text: `GOPROXY=${lan.baseUrl}/repository/go-proxy\n`,
  installHint: "GOENV=<file>, or `go env -w` with this line, or export it"
})

export const cargoConfig = (lan: LanHost): ConfigFile => ({
  name: "config.toml",
  text: "# cargo through larder, written by `larder client-config cargo`\n" +
    toToml({
      source: {
        "crates-io": { "replace-with": "larder" },
        larder: { registry: `sparse+${repositoryUrl(lan, "cargo-proxy")}` }
      }
    }) + "\n",
  installHint: "$CARGO_HOME/config.toml (~/.cargo/config.toml) or a project's .cargo/config.toml"
})
