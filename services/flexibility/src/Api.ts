/**
 * The flexibility service's HTTP contract (spec 001 part A, section 4; bodies of reference
 * nudging-flexibility.md A1 with the original's defects fixed). Every route is under `/api` and
 * needs a bearer token (`Authorization: Bearer` or the `JWT_HEADER_NAME` header an
 * authenticating proxy sets); what the caller may do is decided by `policies/flexibility`:
 *
 * - users (any valid platform token) list their suggestions, answer them, and create, list, read
 *   and cancel their own commitments; another user's commitment is a 404;
 * - service accounts act by scope: `flexibility.commitments.read` (list, read),
 *   `flexibility.commitments.write` (create for a user, cancel), `flexibility.commitments.export`
 *   (export), `flexibility.admin` (everything, including settle and pending).
 *
 * The participant web gateway calls the user routes with the user's token through a typed
 * client of this contract (`ServiceClient.make(Api, ...)` of `@rec/auth`, `asUser`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "@rec/auth"
import { Contract, HttpErrors, Upstream } from "@rec/platform"
import * as Schema from "effect/Schema"
import * as Domain from "./Domain.js"

/** Errors of a route that calls the digital twin: its failures, as `Upstream` maps them. */
const UpstreamErrors = Schema.Union(...Upstream.httpErrors)

export class SuggestionsGroup extends HttpApiGroup.make("suggestions")
  .add(
    HttpApiEndpoint.get("list", "/suggestions")
      .addSuccess(Schema.Array(Domain.Suggestion))
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "The caller's open flexibility windows (at most 2, largest impact first)")
      .annotate(
        OpenApi.Description,
        "Read from the digital twin with the caller's token: the first meter among the caller's assets, then its " +
          "`rec_flexibility_windows`. Windows under 0.5 kWh and windows the caller already committed to are left " +
          "out. No meter or no windows is an empty list; a digital-twin failure is a 502/504 naming it. Users only."
      )
  )
  .add(
    HttpApiEndpoint.post("respond")`/suggestions/${HttpApiSchema.param("id", Domain.SuggestionId)}/respond`
      .setPayload(Contract.allErrors(Domain.RespondRequest))
      .addSuccess(Domain.RespondResponse)
      .addError(HttpErrors.NotFound)
      .addError(HttpErrors.Conflict)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Accept (a commitment) or decline (recorded as rejected) a suggestion")
      .annotate(
        OpenApi.Description,
        "Accepting reads the caller's community and meter from the digital twin, and the window of the suggestion " +
          "when the body gives none (404 when the digital twin has no such open window); publishes " +
          "`rec/flexibility/committed/{user_id}` and schedules a reminder 15 minutes before the window. A second " +
          "commitment to the same suggestion is a 409; declining a suggestion already committed to is a 409 " +
          "(cancel the commitment instead); declining twice is answered like the first time. Users only."
      )
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.InternalServerError)
  .middleware(Authentication.Authentication)
  .prefix("/api")
  .annotate(OpenApi.Title, "Suggestions")
{}

const commitmentPath = HttpApiSchema.param("id", Schema.UUID)

export class CommitmentsGroup extends HttpApiGroup.make("commitments")
  .add(
    HttpApiEndpoint.post("create", "/commitments")
      .setPayload(Contract.allErrors(Domain.CreateCommitment))
      .addSuccess(Domain.Commitment, { status: 201 })
      .addError(HttpErrors.Conflict)
      .addError(HttpErrors.UnprocessableEntity)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Create a commitment")
      .annotate(
        OpenApi.Description,
        "A user commits themself: community and meter come from the digital twin (a `device_id` that is not the " +
          "caller's meter is a 422) and the window must not have ended. A service account " +
          "(`flexibility.commitments.write`) names the user and takes community and device as given. The window's " +
          `end must follow its start, at most ${Domain.maxWindowHours} hours later. One live (committed or settled) ` +
          "commitment per user and suggestion: a second is a 409."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/commitments")
      .setUrlParams(Contract.allErrors(Domain.ListParams))
      .addSuccess(Domain.CommitmentPage)
      .annotate(OpenApi.Summary, "List commitments, newest first, with the total over all pages")
      .annotate(
        OpenApi.Description,
        "Users see their own. Service accounts (`flexibility.commitments.read`) see everyone's, or one user's with " +
          "`user_id`."
      )
  )
  .add(
    HttpApiEndpoint.get("pending", "/commitments/pending")
      .setUrlParams(Contract.allErrors(Domain.PendingParams))
      .addSuccess(Schema.Array(Domain.Commitment))
      .annotate(OpenApi.Summary, "Take the commitments whose window is open now and not yet reminded (one-shot)")
      .annotate(
        OpenApi.Description,
        "Each returned commitment is marked reminded in the same statement, so it is returned once, whichever " +
          "instance is asked (rows locked by a concurrent call are skipped). `flexibility.admin`."
      )
  )
  .add(
    HttpApiEndpoint.get("export", "/commitments/export")
      .setUrlParams(Contract.allErrors(Domain.ExportParams))
      .addSuccess(Schema.Array(Domain.Commitment))
      .annotate(OpenApi.Summary, "Every commitment, oldest first, for pipeline mirroring (streamed)")
      .annotate(
        OpenApi.Description,
        "A JSON array of every commitment of every user in every state, ascending by `committed_at`, streamed from a " +
          "database cursor (constant memory, whatever the table's size). `created_after` is an inclusive lower bound " +
          "on `committed_at`. `flexibility.commitments.export` or `flexibility.admin`."
      )
  )
  .add(
    HttpApiEndpoint.get("get")`/commitments/${commitmentPath}`
      .addSuccess(Domain.Commitment)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "One commitment (the owner, or a service account with flexibility.commitments.read)")
  )
  .add(
    HttpApiEndpoint.del("cancel")`/commitments/${commitmentPath}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(HttpErrors.NotFound)
      .addError(HttpErrors.Conflict)
      .annotate(OpenApi.Summary, "Cancel a commitment (committed -> cancelled)")
      .annotate(
        OpenApi.Description,
        "The owner, or a service account with `flexibility.commitments.write`. Any other state is a 409."
      )
  )
  .add(
    HttpApiEndpoint.patch("settle")`/commitments/${commitmentPath}/settle`
      .setPayload(Contract.allErrors(Domain.SettleRequest))
      .addSuccess(Domain.Commitment)
      .addError(HttpErrors.NotFound)
      .addError(HttpErrors.Conflict)
      .annotate(OpenApi.Summary, "Settle a commitment with the points given (committed -> settled)")
      .annotate(
        OpenApi.Description,
        "Stores `reward_points_actual` and `actual_kwh` and sends the user a `commitment_settled` nudge. Any other " +
          "state is a 409. `flexibility.admin`."
      )
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.InternalServerError)
  .middleware(Authentication.Authentication)
  .prefix("/api")
  .annotate(OpenApi.Title, "Commitments")
{}

export class Api extends Contract.make("flexibility")
  .add(SuggestionsGroup)
  .add(CommitmentsGroup)
  .annotate(OpenApi.Title, "REC flexibility service")
  .annotate(
    OpenApi.Description,
    "Flexibility windows (suggestions), commitments, settlement and points of the renewable energy community."
  )
{}
