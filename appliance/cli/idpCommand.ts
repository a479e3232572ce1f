// `larder idp ...`: maintenance of the embedded identity provider's state in the data directory.
import { Config } from "effect"
import { Command, Flag } from "effect/cli"
import { resolve } from "node:path"
import { keyFilePath, rotateSigningKeys } from "../../src/idp/keys.ts"
import { runAction } from "./action.ts"

const rotateKeys = Command.make("rotate-keys", {
  dataDir: Flag.String("data-dir").pipe(
    Flag.withDescription("larder's data directory"),
    Flag.withFallbackConfig(Config.String("LARDER_DATA_DIR")),
    Flag.withDefault("./data")
  )
}, (options) =>
  runAction("idp rotate-keys", async () => {
    const dataDir = resolve(options.dataDir)
    const { current, previous } = await rotateSigningKeys(dataDir)
    console.log(`new signing key ${current} written to ${keyFilePath(dataDir)}`)
    console.log(previous === undefined ? "there was no previous key" : `previous key ${previous} stays in the JWKS so tokens it signed still verify; older keys are dropped`)
    console.log("restart larder to sign with the new key")
  })).pipe(Command.withDescription("Make a new signing key current; the previous one stays in the JWKS for verification"))

export const idpCommand = Command.make("idp").pipe(
  Command.withDescription("Embedded identity provider maintenance"),
  Command.withSubcommands([rotateKeys])
)
