// Nexus's repository REST API (the part a proxy-only appliance has), defined once with
// effect/http-api: the same definition routes requests, validates parameters and produces the
// OpenAPI document at /service/rest/swagger.json. Bodies are validated by larder's own repository
// Schema in the handlers so that failures take Nexus's `[{id, message}]` shape.
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"

const v1 = "/service/rest/v1/repositories"

export const ValidationErrors = Schema.Array(Schema.Struct({ id: Schema.String, message: Schema.String })).pipe(HttpApiSchema.status(400))

export const NotFound = Schema.Struct({ status: Schema.Literal(404), message: Schema.String }).pipe(HttpApiSchema.status(404))

export const Summary = Schema.Struct({
  name: Schema.String,
  format: Schema.String,
  type: Schema.String,
  url: Schema.String,
  attributes: Schema.Struct({ proxy: Schema.Struct({ remoteUrl: Schema.String }) })
})

/** the full repository object; described loosely, its fields depend on the format */
export const FullRepository = Schema.Record(Schema.String, Schema.Unknown)

export class RepositoriesGroup extends HttpApiGroup.make("repositories").add(
  HttpApiEndpoint.get("list", v1, { success: Schema.Array(Summary) }),
  HttpApiEndpoint.get("get", `${v1}/:name`, { params: { name: Schema.String }, success: FullRepository, error: NotFound }),
  HttpApiEndpoint.get("getByFormat", `${v1}/:format/proxy/:name`, {
    params: { format: Schema.String, name: Schema.String },
    success: FullRepository,
    error: NotFound
  }),
  HttpApiEndpoint.post("create", `${v1}/:format/proxy`, {
    params: { format: Schema.String },
    payload: Schema.Unknown,
    success: HttpApiSchema.Created,
    error: ValidationErrors
  }),
  HttpApiEndpoint.put("update", `${v1}/:format/proxy/:name`, {
    params: { format: Schema.String, name: Schema.String },
    payload: Schema.Unknown,
    success: HttpApiSchema.NoContent,
    error: [ValidationErrors, NotFound]
  }),
  HttpApiEndpoint.delete("remove", `${v1}/:name`, { params: { name: Schema.String }, success: HttpApiSchema.NoContent, error: NotFound }),
  HttpApiEndpoint.post("invalidateCache", `${v1}/:name/invalidate-cache`, {
    params: { name: Schema.String },
    success: HttpApiSchema.NoContent,
    error: NotFound
  })
) {}

export class LarderApi extends HttpApi.make("larder").add(RepositoriesGroup) {}
