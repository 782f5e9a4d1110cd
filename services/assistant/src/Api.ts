/**
 * The assistant's HTTP contract (spec part B, section 4, and the endpoints the chat frontend
 * expects). Other services and tests derive typed clients from it (`HttpApiClient.make(Api)`).
 *
 * Every endpoint is served at the root and again under `ASSISTANT_API_BASE` (default `/api`), so
 * the participant gateway can proxy `/api/assistant/{path}` to `{ASSISTANT_URL}/api/{path}` and
 * a frontend configured with the base `/api` finds the same operations.
 *
 * - `system`: `GET /health`, without a token.
 * - `chat`: `POST /chat`, a `text/event-stream` of `data: {"type", "data"}` frames
 *   (`Domain.ChatFrame`) ending with `data: [DONE]`.
 * - `attachments`, `conversations`, `user`: the caller's own data; another user's ids are 404.
 * - `admin`: group `admin` or `admins`, or scope `assistant.admin` (policy `rec.assistant.admin`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "@rec/auth"
import { Contract, HttpErrors } from "@rec/platform"
import * as Domain from "./Domain.js"

const attachmentId = HttpApiSchema.param("id", Domain.AttachmentId)
const conversationId = HttpApiSchema.param("id", Domain.ConversationId)

export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Domain.HealthResponse)
      .annotate(OpenApi.Summary, "Liveness; no token needed")
  )
  .annotate(OpenApi.Title, "Health")
{}

const chatDescription = [
  "Streams the answer as Server-Sent Events: one `data: <json>` line and a blank line per frame, no `event:` line.",
  "Frames, in order: `{\"type\":\"meta\",\"data\":{\"conversation_id\",\"title\"}}`;",
  "`{\"type\":\"sources\",\"data\":[Source]}` (unless `include_citations` is false);",
  "one `{\"type\":\"token\",\"data\":\"<text>\"}` per delta of the answer;",
  "`{\"type\":\"error\",\"data\":{\"message\"}}` if retrieval or the language model fails;",
  "`{\"type\":\"done\",\"data\":null}`; then the sentinel `data: [DONE]`.",
  "Without `conversation_id` a conversation is created, titled after the first message. The user message is stored",
  "before the stream starts, the reply when it ends (`interrupted` when the client goes away, `failed` with the error).",
  "Errors before the stream starts (no token, an unknown conversation or attachment, an empty message) are JSON as usual."
].join(" ")

export class ChatGroup extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("chat", "/chat")
      .setPayload(Domain.ChatRequest)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
        description: "`data: {\"type\": ..., \"data\": ...}` frames (see `ChatFrame`), then `data: [DONE]`."
      }))
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "Ask the assistant; the answer streams as text/event-stream")
      .annotate(OpenApi.Description, chatDescription)
  )
  .addError(HttpErrors.BadRequest)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Chat")
{}

export class AttachmentsGroup extends HttpApiGroup.make("attachments")
  .add(
    HttpApiEndpoint.post("upload", "/upload")
      .setPayload(HttpApiSchema.MultipartStream(Domain.UploadPayload))
      .addSuccess(Domain.Attachment, { status: 201 })
      .addError(HttpErrors.PayloadTooLarge)
      .addError(Domain.UnsupportedMediaType)
      .addError(HttpErrors.UnprocessableEntity)
      .addError(HttpErrors.BadGateway)
      .annotate(OpenApi.Summary, "Upload a file (PDF, DOCX, Markdown, HTML, plain text): stored, parsed, chunked, embedded")
      .annotate(
        OpenApi.Description,
        "multipart/form-data with the field `file`. The type is sniffed from the content. Larger than " +
          "ASSISTANT_MAX_UPLOAD_BYTES: 413. A file that cannot be parsed: 422, nothing is kept."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/attachments")
      .setUrlParams(Domain.AttachmentListParams)
      .addSuccess(Domain.AttachmentList)
      .annotate(OpenApi.Summary, "The caller's attachments (and, with scope=shared|all, the training materials)")
  )
  .add(
    HttpApiEndpoint.get("raw")`/attachments/${attachmentId}/raw`
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "application/octet-stream" }).annotations({
        description: "The file as uploaded, with its sniffed content type and `Content-Disposition: inline`."
      }))
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "The raw uploaded file")
  )
  .add(
    HttpApiEndpoint.del("delete")`/attachments/${attachmentId}`
      .addSuccess(Domain.AttachmentDeleted)
      .addError(HttpErrors.NotFound)
      .addError(HttpErrors.Forbidden)
      .annotate(OpenApi.Summary, "Delete an attachment: its file, chunks and vectors, in one operation")
  )
  .addError(HttpErrors.BadRequest)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Attachments")
{}

export class ConversationsGroup extends HttpApiGroup.make("conversations")
  .add(
    HttpApiEndpoint.get("list", "/conversations")
      .setUrlParams(Domain.ConversationListParams)
      .addSuccess(Domain.ConversationList)
      .annotate(OpenApi.Summary, "The caller's conversations, most recently active first")
  )
  .add(
    HttpApiEndpoint.get("messages")`/conversations/${conversationId}/messages`
      .setUrlParams(Domain.MessageListParams)
      .addSuccess(Domain.MessageList)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "The messages of a conversation, oldest first")
  )
  .add(
    HttpApiEndpoint.del("delete")`/conversations/${conversationId}`
      .addSuccess(Domain.ConversationDeleted)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "Delete a conversation and its messages")
  )
  .addError(HttpErrors.BadRequest)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Conversations")
{}

export class UserGroup extends HttpApiGroup.make("user")
  .add(
    HttpApiEndpoint.get("profile", "/user")
      .addSuccess(Domain.UserProfile)
      .annotate(OpenApi.Summary, "The caller, from the token (sub, email, name) and whether they administer the assistant")
  )
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "User")
{}

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("uploads", "/admin/uploads")
      .setPayload(Domain.AdminUploadsRequest)
      .addSuccess(Domain.AdminUploadsResponse)
      .annotate(OpenApi.Summary, "List and inspect every upload and training material (filters, paging)")
  )
  .add(
    HttpApiEndpoint.post("ingest", "/admin/ingest")
      .setPayload(Domain.IngestRequest)
      .addSuccess(Domain.IngestResponse)
      .addError(HttpErrors.NotFound)
      .addError(HttpErrors.UnprocessableEntity)
      .addError(HttpErrors.BadGateway)
      .annotate(OpenApi.Summary, "Re-index an attachment from its stored file (parse, chunk, embed, replace)")
  )
  .add(
    HttpApiEndpoint.post("reload", "/admin/reload")
      .addSuccess(Domain.ReloadResponse)
      .addError(HttpErrors.BadGateway)
      .annotate(OpenApi.Summary, "Rebuild the retrieval state from the store without a restart")
      .annotate(
        OpenApi.Description,
        "Ensures the vector index of the current embedder, embeds the chunks that have no vector of it (after a " +
          "change of embedder or a restore), and drops the in-memory query-embedding cache."
      )
  )
  .add(
    HttpApiEndpoint.post("trainingSync", "/admin/training-materials/sync")
      .setPayload(Domain.TrainingSyncRequest)
      .addSuccess(Domain.TrainingSyncResponse)
      .addError(HttpErrors.Conflict)
      .addError(HttpErrors.UnprocessableEntity)
      .addError(HttpErrors.BadGateway)
      .annotate(OpenApi.Summary, "Clone or fetch the training-materials repository, check out a ref, ingest its Markdown")
      .annotate(
        OpenApi.Description,
        "Repository TRAINING_MATERIALS_REPO (a local path or an https URL), ref `target_ref` or TRAINING_MATERIALS_REF. " +
          "Changed Markdown files are ingested again, deleted ones removed, unchanged ones left alone. 409 when no " +
          "repository is configured, the checkout has local changes or another sync is running; 422 for an unknown ref."
      )
  )
  .addError(HttpErrors.BadRequest)
  .addError(HttpErrors.Forbidden)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Administration")
{}

export class Api extends Contract.make("assistant")
  .add(SystemGroup)
  .add(ChatGroup)
  .add(AttachmentsGroup)
  .add(ConversationsGroup)
  .add(UserGroup)
  .add(AdminGroup)
  .annotate(OpenApi.Title, "REC assistant")
  .annotate(
    OpenApi.Description,
    "Chat with retrieval over the user's documents and the shared training materials. Every operation is also " +
      "served under ASSISTANT_API_BASE (default /api)."
  )
{}
