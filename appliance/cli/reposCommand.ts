// `larder repos ...`: configuration through the REST API of a running larder (or Nexus).
import { readFileSync } from "node:fs"
import { Config, Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { ApplyError, applyRepositories } from "./reposApply.ts"

const connection = {
  url: Flag.String("url").pipe(
    Flag.withDescription("Base URL of larder's web listener (or a Nexus)"),
    Flag.withFallbackConfig(Config.String("LARDER_URL")),
    Flag.withDefault("http://127.0.0.1:8080")
  ),
  user: Flag.String("user").pipe(
    Flag.withDescription("Admin user name"),
    Flag.withFallbackConfig(Config.String("LARDER_USER")),
    Flag.withDefault("admin")
  ),
  // the password never travels as a flag value (it would show in ps and shell history)
  passwordFile: Flag.String("password-file").pipe(Flag.withDescription("File holding the admin password (else LARDER_PASSWORD)"), Flag.optional)
}

const readPassword = (file: { readonly _tag: "Some"; readonly value: string } | { readonly _tag: "None" }): string => {
  if (file._tag === "Some") return readFileSync(file.value, "utf8").trim()
  const fromEnv = process.env.LARDER_PASSWORD
  if (fromEnv === undefined || fromEnv === "") throw new ApplyError("no password: pass --password-file FILE or set LARDER_PASSWORD")
  return fromEnv
}

const apply = Command.make("apply", {
  file: Argument.String("file").pipe(Argument.withDescription("YAML or JSON list of repository objects (Nexus REST shape)")),
  dryRun: Flag.Boolean("dry-run").pipe(Flag.withDescription("Print the plan and change nothing"), Flag.withDefault(false)),
  only: Flag.String("only").pipe(Flag.withDescription("Apply only the repository with this name"), Flag.optional),
  ...connection
}, (options) =>
  Effect.tryPromise({
    try: () =>
      applyRepositories({
        file: options.file,
        url: options.url,
        user: options.user,
        password: readPassword(options.passwordFile),
        dryRun: options.dryRun,
        only: options.only._tag === "Some" ? options.only.value : undefined,
        print: (line) => console.log(line)
      }),
    catch: (error) => error
  }).pipe(
    Effect.asVoid,
    Effect.catch((error) =>
      Effect.sync(() => {
        console.error(`larder repos apply: ${error instanceof Error ? error.message : String(error)}`)
        process.exitCode = 1
      }))
  )).pipe(Command.withDescription("Create or update repositories so they match FILE; prints the plan"))

export const reposCommand = Command.make("repos").pipe(
  Command.withDescription("Configure repositories through the REST API"),
  Command.withSubcommands([apply])
)
