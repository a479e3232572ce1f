// `larder repos ...`: configuration through the REST API of a running larder (or Nexus).
import { Argument, Command, Flag } from "effect/cli"
import { orUndefined, runAction } from "./action.ts"
import { connectionFlags, defaultUrl } from "./connectionFlags.ts"
import { applyRepositories } from "./reposApply.ts"
import { formatTable, listRepositories } from "./reposList.ts"
import { makeRestClient, readPassword } from "./restClient.ts"

const apply = Command.make("apply", {
  file: Argument.String("file").pipe(Argument.withDescription("YAML or JSON list of repository objects (Nexus REST shape)")),
  dryRun: Flag.Boolean("dry-run").pipe(Flag.withDescription("Print the plan and change nothing"), Flag.withDefault(false)),
  only: Flag.String("only").pipe(Flag.withDescription("Apply only the repository with this name"), Flag.optional),
  ...connectionFlags
}, (options) =>
  runAction("repos apply", () =>
    applyRepositories({
      file: options.file,
      url: orUndefined(options.url) ?? defaultUrl,
      user: options.user,
      password: readPassword(orUndefined(options.passwordFile)),
      dryRun: options.dryRun,
      only: orUndefined(options.only),
      print: (line) => console.log(line)
    }).then(() => undefined))).pipe(Command.withDescription("Create or update repositories so they match FILE; prints the plan"))

const list = Command.make("list", connectionFlags, (options) =>
  runAction("repos list", async () => {
    const api = makeRestClient({ url: orUndefined(options.url) ?? defaultUrl, user: options.user, password: readPassword(orUndefined(options.passwordFile)) })
    console.log(formatTable(await listRepositories(api)))
  })).pipe(Command.withDescription("Print the repositories with their online state and cache hit ratio"))

export const reposCommand = Command.make("repos").pipe(
  Command.withDescription("Configure repositories through the REST API"),
  Command.withSubcommands([apply, list])
)
