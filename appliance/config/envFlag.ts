// Flags that fall back to an environment variable, the shape most of larder's options take.
import { Config } from "effect"
import { Flag } from "effect/cli"

/** the flag, else the variable, else `fallback` */
export const withEnv = <A>(flag: Flag.Flag<A>, env: Config.Config<A>, fallback: A) =>
  flag.pipe(Flag.withFallbackConfig(env), Flag.withDefault(fallback))

/** a string flag, else the variable `env`, else none */
export const optionalStringFlag = (name: string, env: string, description: string) =>
  Flag.String(name).pipe(Flag.withDescription(description), Flag.withFallbackConfig(Config.String(env)), Flag.optional)
