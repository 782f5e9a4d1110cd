/**
 * The community registry's HTTP contract (spec document 3, part A, section 4). Other services
 * derive typed clients from it (`HttpApiClient.make(Api)`); the flexibility service lists
 * communities and their members with a service token holding `registry.read`.
 *
 * - `registry`: the user routes. A bearer token is required; a caller sees the communities it
 *   is a member of (by the token's `sub`), admins (group `admins`) and services with
 *   `registry.read` see all. Every route takes `format=json|jsonld`: typed clients read `json`
 *   (the default); `jsonld` answers `application/ld+json` with expanded IRIs.
 * - `admin`: export, validate and import bundles (v0.4). Admins (group `admins`) or services
 *   with `registry.admin`.
 * - `system`: readiness, the JSON-LD context document and its well-known redirect (no token).
 *   `/health` is the service kit's.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "@rec/auth"
import { Contract, HttpErrors } from "@rec/platform"
import * as Schema from "effect/Schema"
import * as Domain from "./Domain.js"

type Operation = {
  responses: Record<string, { description: string; content?: Record<string, unknown> }>
  [key: string]: unknown
}

/** Documents the `format=jsonld` answer next to the JSON one. */
const alsoJsonLd = OpenApi.annotations({
  transform: (operation) => {
    const op = operation as Operation
    const ok = op.responses["200"]
    if (ok?.content !== undefined) {
      ok.content["application/ld+json"] = {
        schema: {
          type: "object",
          description: "With `format=jsonld`: a JSON-LD document whose `@context` is the ontology context document " +
            "(`ONTOLOGY_CONTEXT_URL`), with `@id` and `@type` on every node and expanded IRIs only. Lists are " +
            "`hydra:Collection`s whose `hydra:view` names the next page.",
          required: ["@context", "@id", "@type"],
          properties: { "@context": { type: "string" }, "@id": { type: "string" }, "@type": {} }
        }
      }
    }
    return op
  }
})

/** The multipart upload the import endpoints read (the contract cannot declare a body on GET). */
const bundleUpload = (description: string) =>
  OpenApi.annotations({
    transform: (operation) => ({
      ...operation,
      requestBody: {
        required: true,
        description,
        content: {
          "multipart/form-data": {
            schema: {
              type: "object",
              required: ["file"],
              properties: {
                file: { type: "string", format: "binary", description: "The bundle (YAML, format v0.4)" }
              }
            }
          }
        }
      }
    })
  })

const userRead = <const Name extends string, const Path extends HttpApiEndpoint.PathSegment>(name: Name, path: Path) =>
  HttpApiEndpoint.get(name, path).annotateContext(alsoJsonLd)

const keyParam = HttpApiSchema.param("key", Schema.String.annotations({ description: "Community key" }))
const idParam = HttpApiSchema.param("id", Schema.String.annotations({ description: "Member id (`<community>.<member key>`)" }))

export class RegistryGroup extends HttpApiGroup.make("registry")
  .add(
    userRead("listCommunities", "/user/communities")
      .setUrlParams(Domain.CommunityListParams)
      .addSuccess(Domain.CommunityList)
      .annotate(OpenApi.Summary, "Communities the caller may see")
  )
  .add(
    HttpApiEndpoint.get("getCommunity")`/user/communities/${keyParam}`
      .annotateContext(alsoJsonLd)
      .setUrlParams(Domain.FormatParams)
      .addSuccess(Domain.Community)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "One community")
  )
  .add(
    HttpApiEndpoint.get("listMembers")`/user/communities/${keyParam}/members`
      .annotateContext(alsoJsonLd)
      .setUrlParams(Domain.MemberListParams)
      .addSuccess(Domain.MemberList)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "Members of a community, optionally of one role")
  )
  .add(
    HttpApiEndpoint.get("getMember")`/user/members/${idParam}`
      .annotateContext(alsoJsonLd)
      .setUrlParams(Domain.FormatParams)
      .addSuccess(Domain.Member)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "One member")
  )
  .add(
    HttpApiEndpoint.get("listMemberAssets")`/user/members/${idParam}/assets`
      .annotateContext(alsoJsonLd)
      .setUrlParams(Domain.MemberAssetParams)
      .addSuccess(Domain.AssetList)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "Assets of a member, optionally of one type")
  )
  .add(
    userRead("listAssets", "/user/assets")
      .setUrlParams(Domain.AssetListParams)
      .addSuccess(Domain.AssetList)
      .annotate(OpenApi.Summary, "Assets, by community, member and type")
  )
  .add(
    userRead("listSites", "/user/sites")
      .setUrlParams(Domain.SiteListParams)
      .addSuccess(Domain.SiteList)
      .annotate(OpenApi.Summary, "Sites, by community and member")
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Registry")
  .annotate(
    OpenApi.Description,
    "Communities, members, assets and sites. A member sees the communities it belongs to; admins and services " +
      "with `registry.read` see all. Another community's member, asset or site is a 404."
  )
{}

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.get("export", "/admin/export")
      .setUrlParams(Domain.ExportParams)
      .addSuccess(HttpApiSchema.Text({ contentType: "application/yaml" }).annotations({
        description: "The community as a bundle v0.4 (YAML); importing it gives the same state, exporting that the same bytes"
      }))
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "Export a community as a bundle v0.4")
  )
  .add(
    HttpApiEndpoint.get("validate", "/admin/import")
      .addSuccess(Domain.ValidationResult)
      .annotateContext(bundleUpload("The bundle to check; nothing is written"))
      .annotate(OpenApi.Summary, "Validate a bundle without importing it")
      .annotate(
        OpenApi.Description,
        "Every problem at once: schema errors with their paths, dangling references, duplicate keys, unknown " +
          "prefixes and owners. Answers 200 whether or not the bundle is valid (`valid`). Parsing limits (size, " +
          "YAML nesting depth, aliases and what they expand to) answer 413/400 before anything else runs."
      )
  )
  .add(
    HttpApiEndpoint.post("import", "/admin/import")
      .addSuccess(Domain.ImportResult, { status: 201 })
      .addError(Domain.BundleInvalid)
      .addError(HttpErrors.Conflict)
      .annotateContext(bundleUpload("The bundle to import: it replaces the community of the same key, in one transaction"))
      .annotate(OpenApi.Summary, "Import a bundle (full replace)")
      .annotate(
        OpenApi.Description,
        "Deletes the community of the bundle's key and everything in it, then creates it from the bundle, in one " +
          "transaction. A bundle with any problem is refused whole (422, every problem listed); any failure leaves " +
          "the previous data as it was. Publishes `rec/registry/updates/<community>` when a broker is configured."
      )
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Administration")
  .annotate(OpenApi.Description, "Admins only: group `admins`, or a service with the `registry.admin` scope.")
{}

export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Domain.Readiness)
      .addError(Domain.NotReady)
      .annotate(OpenApi.Summary, "Readiness: database and policies; the MQTT broker only degrades it")
  )
  .add(
    HttpApiEndpoint.get("context", "/context.jsonld")
      .addSuccess(HttpApiSchema.Text({ contentType: "application/ld+json" }).annotations({
        description: "The JSON-LD context document of the registry's vocabulary (prefixes and terms)"
      }))
      .annotate(OpenApi.Summary, "The registry's JSON-LD context document")
  )
  .add(
    HttpApiEndpoint.get("wellKnownContext", "/.well-known/jsonld-context")
      .addSuccess(HttpApiSchema.Empty(302).annotations({ description: "Location: the ontology context document" }))
      .annotate(OpenApi.Summary, "Redirect to the ontology context document (`ONTOLOGY_CONTEXT_URL`)")
  )
  .annotate(OpenApi.Title, "System")
{}

export class Api extends Contract.make("registry")
  .add(RegistryGroup)
  .add(AdminGroup)
  .add(SystemGroup)
  .annotate(OpenApi.Title, "REC community registry")
  .annotate(
    OpenApi.Description,
    "Renewable energy communities, their members, assets and sites, as JSON or JSON-LD; community bundles " +
      "(v0.4, YAML) validated, imported and exported by administrators."
  )
{}
