// Runs a CLI command's work: its lines go to stdout, a failure prints `larder <command>: <message>`
// to stderr and sets a non-zero exit code instead of a stack trace.
import { Effect, Option } from "effect"

export const runAction = (command: string, work: () => Promise<void>) =>
  Effect.tryPromise({ try: work, catch: (error) => error }).pipe(
    Effect.catch((error) =>
      Effect.sync(() => {
        console.error(`larder ${command}: ${error instanceof Error ? error.message : String(error)}`)
        process.exitCode = 1
      })
    )
  )

export const orUndefined = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)
