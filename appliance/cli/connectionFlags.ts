// The flags every command that talks to larder's REST API takes.
import { Config } from "effect"
import { Flag } from "effect/cli"
import { optionalStringFlag } from "../config/envFlag.ts"

export const connectionFlags = {
  url: optionalStringFlag("url", "LARDER_URL", "Base URL of larder's web or LAN listener (or a Nexus)"),
  user: Flag.String("user").pipe(
    Flag.withDescription("Admin user name"),
    Flag.withFallbackConfig(Config.String("LARDER_USER")),
    Flag.withDefault("admin")
  ),
  // the password never travels as a flag value (it would show in ps and shell history)
  passwordFile: Flag.String("password-file").pipe(Flag.withDescription("File holding the admin password (else LARDER_PASSWORD)"), Flag.optional)
}

export const defaultUrl = "http://127.0.0.1:8080"
