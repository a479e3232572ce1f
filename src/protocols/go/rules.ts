// PLACEHOLDER: served as raw files until this format's rules are written.
import type { Repository } from "../../../appliance/config/Repository.ts"
import { classify } from "../raw/classify.ts"
import type { FormatRules } from "../route.ts"

export const goRules = (_repository: Repository): FormatRules => ({ classify, errorStyle: "text", forwardQuery: true })
