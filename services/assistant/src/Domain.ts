/**
 * Request and response bodies of the assistant (spec part B, sections 2 and 4), the frames of the
 * chat stream, and the service's own error classes. Field names are snake_case on the wire, as
 * the chat frontend expects.
 */
import { Contract, HttpErrors } from "@rec/platform"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------
// Identifiers

export const AttachmentId = Schema.UUID.pipe(Schema.brand("AttachmentId")).annotations({
  identifier: "AttachmentId",
  description: "An attachment's id (UUID)."
})
export type AttachmentId = typeof AttachmentId.Type

export const ConversationId = Schema.UUID.pipe(Schema.brand("ConversationId")).annotations({
  identifier: "ConversationId",
  description: "A conversation's id (UUID)."
})
export type ConversationId = typeof ConversationId.Type

export const MessageId = Schema.UUID.pipe(Schema.brand("MessageId"))
export type MessageId = typeof MessageId.Type

const JsonObject = Schema.Record({ key: Schema.String, value: HttpErrors.AnyJson })
const Timestamp = Schema.String.annotations({ description: "ISO 8601 UTC timestamp." })

const limited = (max: number) => Schema.String.pipe(Schema.maxLength(max))

/** Page size and offset of listings (`limit` clamped by its schema, `offset` from 0). */
const pageParams = (defaultLimit: number, maxLimit: number) => ({
  limit: Schema.optionalWith(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, maxLimit)),
    { default: () => defaultLimit }
  ).annotations({ description: `Page size, 1 to ${maxLimit} (default ${defaultLimit}).` }),
  offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative()), { default: () => 0 })
    .annotations({ description: "Items to skip (default 0)." })
})

// ---------------------------------------------------------------------------------------------
// Chat

/** What the frontend knows about the page the user is on (all optional). */
export const PageContext = Schema.Struct({
  page: Schema.optional(limited(200)),
  section: Schema.optional(limited(200)),
  data: Schema.optional(JsonObject).annotations({ description: "Values shown on the page (for example the overview's figures)." }),
  hint: Schema.optional(limited(2_000)).annotations({ description: "What the user is probably trying to do." })
}).annotations({ identifier: "PageContext" })
export type PageContext = typeof PageContext.Type

export const maxMessageLength = 16_000

export const ChatRequest = Contract.allErrors(Schema.Struct({
  message: limited(maxMessageLength).annotations({
    description: "The user's message; may be empty only when `attachment_ids` names files to summarise."
  }),
  conversation_id: Schema.optional(ConversationId).annotations({
    description: "Continue this conversation of the caller; omitted: a new conversation is created."
  }),
  context: Schema.optional(PageContext),
  attachment_ids: Schema.optional(Schema.Array(AttachmentId).pipe(Schema.maxItems(20))).annotations({
    description: "Attachments (the caller's own or shared training materials) the question is about."
  }),
  top_k: Schema.optional(Schema.Int.pipe(Schema.between(1, 20))).annotations({
    description: "Passages to retrieve (default ASSISTANT_TOP_K)."
  }),
  include_citations: Schema.optionalWith(Schema.Boolean, { default: () => true }).annotations({
    description: "Send the `sources` frame (default true)."
  })
})).annotations({ identifier: "ChatRequest" })
export type ChatRequest = typeof ChatRequest.Type

/** A retrieved passage as the client sees it (the `sources` frame, stored with the reply). */
export const Source = Schema.Struct({
  source: Schema.String.annotations({ description: "`attachment://<id>` or `training-materials://<location>`." }),
  title: Schema.String,
  text: Schema.String,
  score: Schema.Number.annotations({ description: "Reciprocal-rank-fusion score of vector and full-text search." }),
  metadata: Schema.Struct({
    attachment_id: AttachmentId,
    filename: Schema.String,
    kind: Schema.Literal("upload", "training_material"),
    heading: Schema.NullOr(Schema.String),
    chunk_index: Schema.Number,
    location: Schema.NullOr(Schema.String),
    similarity: Schema.NullOr(Schema.Number).annotations({ description: "Cosine similarity of the embeddings, when the vector search found it." }),
    text_rank: Schema.NullOr(Schema.Number).annotations({ description: "Full-text rank, when the full-text search found it." })
  })
}).annotations({ identifier: "Source" })
export type Source = typeof Source.Type

/**
 * One frame of the chat stream: a `data: <json>` line and a blank line (no `event:` line), as the
 * original chat frontend parses them; the stream ends with `data: [DONE]`.
 */
export const ChatFrame = Schema.Union(
  Schema.Struct({ type: Schema.Literal("meta"), data: Schema.Struct({ conversation_id: ConversationId, title: Schema.String }) }),
  Schema.Struct({ type: Schema.Literal("sources"), data: Schema.Array(Source) }),
  Schema.Struct({ type: Schema.Literal("token"), data: Schema.String }),
  Schema.Struct({ type: Schema.Literal("error"), data: Schema.Struct({ message: Schema.String }) }),
  Schema.Struct({ type: Schema.Literal("done"), data: Schema.Null })
).annotations({ identifier: "ChatFrame" })
export type ChatFrame = typeof ChatFrame.Type

// ---------------------------------------------------------------------------------------------
// Attachments

export const AttachmentStatus = Schema.Literal("indexed", "empty").annotations({
  description: "`indexed`: parsed, chunked and embedded; `empty`: stored, but no text was found in it."
})

export const AttachmentScope = Schema.Literal("user", "shared").annotations({
  description: "`user`: the caller's own upload; `shared`: a training material every user can read."
})

export const Attachment = Schema.Struct({
  id: AttachmentId,
  filename: Schema.String,
  content_type: Schema.String.annotations({ description: "Sniffed from the content, not taken from the upload." }),
  size_bytes: Schema.Number,
  scope: AttachmentScope,
  status: AttachmentStatus,
  chunk_count: Schema.Number,
  title: Schema.NullOr(Schema.String),
  created_at: Timestamp
}).annotations({ identifier: "Attachment" })
export type Attachment = typeof Attachment.Type

export const AttachmentList = Schema.Struct({
  items: Schema.Array(Attachment),
  total: Schema.Number,
  limit: Schema.Number,
  offset: Schema.Number
}).annotations({ identifier: "AttachmentList" })

export const AttachmentListParams = Schema.Struct({
  scope: Schema.optionalWith(Schema.Literal("own", "shared", "all"), { default: () => "own" as const }).annotations({
    description: "`own` (default): the caller's uploads; `shared`: training materials; `all`: both."
  }),
  ...pageParams(50, 200)
})

export const UploadPayload = Schema.Struct({
  file: Schema.Unknown.annotations({ description: "The file (multipart field `file`).", format: "binary" })
}).annotations({ identifier: "UploadPayload" })

export const AttachmentDeleted = Schema.Struct({
  status: Schema.Literal("deleted"),
  attachment_id: AttachmentId,
  chunks_removed: Schema.Number
}).annotations({ identifier: "AttachmentDeleted" })

// ---------------------------------------------------------------------------------------------
// Conversations

export const ConversationSummary = Schema.Struct({
  id: ConversationId,
  title: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp,
  message_count: Schema.Number,
  last_snippet: Schema.NullOr(Schema.String).annotations({ description: "The start of the latest message." })
}).annotations({ identifier: "ConversationSummary" })
export type ConversationSummary = typeof ConversationSummary.Type

export const ConversationList = Schema.Struct({
  items: Schema.Array(ConversationSummary),
  total: Schema.Number,
  limit: Schema.Number,
  offset: Schema.Number
}).annotations({ identifier: "ConversationList" })

export const ConversationListParams = Schema.Struct(pageParams(50, 200))

export const MessageRole = Schema.Literal("user", "assistant")
export const MessageStatus = Schema.Literal("complete", "interrupted", "failed").annotations({
  description: "`interrupted`: the client went away while the reply streamed; `failed`: the model failed (see `error`)."
})
export type MessageStatus = typeof MessageStatus.Type

export const Message = Schema.Struct({
  id: MessageId,
  conversation_id: ConversationId,
  role: MessageRole,
  content: Schema.String,
  status: MessageStatus,
  error: Schema.NullOr(Schema.String),
  sources: Schema.Array(Source),
  created_at: Timestamp
}).annotations({ identifier: "Message" })
export type Message = typeof Message.Type

export const MessageList = Schema.Struct({
  conversation_id: ConversationId,
  title: Schema.String,
  messages: Schema.Array(Message),
  total: Schema.Number,
  limit: Schema.Number,
  offset: Schema.Number
}).annotations({ identifier: "MessageList" })

export const MessageListParams = Schema.Struct(pageParams(500, 1000))

export const ConversationDeleted = Schema.Struct({
  status: Schema.Literal("deleted"),
  conversation_id: ConversationId,
  messages_removed: Schema.Number
}).annotations({ identifier: "ConversationDeleted" })

// ---------------------------------------------------------------------------------------------
// User

export const UserProfile = Schema.Struct({
  sub: Schema.String,
  email: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  username: Schema.NullOr(Schema.String),
  groups: Schema.Array(Schema.String),
  is_admin: Schema.Boolean
}).annotations({ identifier: "UserProfile" })

// ---------------------------------------------------------------------------------------------
// Admin

export const AttachmentChunk = Schema.Struct({
  index: Schema.Number,
  heading: Schema.NullOr(Schema.String),
  token_count: Schema.Number,
  text: Schema.String,
  embedded: Schema.Boolean.annotations({ description: "Has a vector of the current embedder." })
}).annotations({ identifier: "AttachmentChunk" })

export const AdminAttachment = Schema.Struct({
  ...Attachment.fields,
  owner_id: Schema.NullOr(Schema.String),
  source: Schema.Literal("upload", "training_material"),
  location: Schema.NullOr(Schema.String),
  sha256: Schema.String,
  indexed_at: Schema.NullOr(Timestamp),
  chunks: Schema.optional(Schema.Array(AttachmentChunk))
}).annotations({ identifier: "AdminAttachment" })
export type AdminAttachment = typeof AdminAttachment.Type

export const AdminUploadsRequest = Contract.allErrors(Schema.Struct({
  id: Schema.optional(AttachmentId).annotations({ description: "Inspect this attachment." }),
  owner_id: Schema.optional(limited(512)),
  scope: Schema.optional(AttachmentScope),
  status: Schema.optional(AttachmentStatus),
  content_type: Schema.optional(limited(200)),
  filename: Schema.optional(limited(512)).annotations({ description: "Part of the file name (case-insensitive)." }),
  include_chunks: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "Add each attachment's chunks (their text, heading, tokens, embedding state)."
  }),
  limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 200)), { default: () => 50 }),
  offset: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 0 })
})).annotations({ identifier: "AdminUploadsRequest" })
export type AdminUploadsRequest = typeof AdminUploadsRequest.Type

export const AdminUploadsResponse = Schema.Struct({
  items: Schema.Array(AdminAttachment),
  total: Schema.Number,
  limit: Schema.Number,
  offset: Schema.Number
}).annotations({ identifier: "AdminUploadsResponse" })

export const IngestRequest = Contract.allErrors(Schema.Struct({ attachment_id: AttachmentId }))
  .annotations({ identifier: "IngestRequest" })

export const IngestResponse = Schema.Struct({
  attachment_id: AttachmentId,
  status: AttachmentStatus,
  chunk_count: Schema.Number,
  embedder: Schema.String
}).annotations({ identifier: "IngestResponse" })

export const ReloadResponse = Schema.Struct({
  status: Schema.Literal("ok"),
  embedder: Schema.String,
  dimensions: Schema.Number,
  attachments: Schema.Number,
  chunks: Schema.Number,
  embedded: Schema.Number.annotations({ description: "Chunks that lacked a vector of the current embedder and were embedded now." }),
  cache_cleared: Schema.Number.annotations({ description: "Query embeddings dropped from the in-memory cache." })
}).annotations({ identifier: "ReloadResponse" })

export const TrainingSyncRequest = Contract.allErrors(Schema.Struct({
  target_ref: Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1),
      Schema.maxLength(200),
      Schema.pattern(/^(?!-)[A-Za-z0-9._/@^~-]+$/, {
        message: () => "a branch, tag or commit (letters, digits and . _ / @ ^ ~ -, not starting with -)"
      })
    )
  ).annotations({ description: "Branch, tag or commit to check out (default TRAINING_MATERIALS_REF)." })
})).annotations({ identifier: "TrainingSyncRequest" })

export const TrainingSyncResponse = Schema.Struct({
  status: Schema.Literal("ok"),
  git: Schema.Struct({
    repository: Schema.String,
    path: Schema.String,
    target: Schema.String,
    previous_commit: Schema.NullOr(Schema.String),
    current_commit: Schema.String,
    updated: Schema.Boolean
  }),
  ingest: Schema.Struct({
    root: Schema.String,
    added: Schema.Number,
    updated: Schema.Number,
    removed: Schema.Number,
    unchanged: Schema.Number,
    chunks: Schema.Number
  })
}).annotations({ identifier: "TrainingSyncResponse" })
export type TrainingSyncResponse = typeof TrainingSyncResponse.Type

// ---------------------------------------------------------------------------------------------
// Health

export const HealthResponse = Schema.Struct({
  status: Schema.Literal("ok"),
  service: Schema.String,
  version: Schema.String
}).annotations({ identifier: "HealthResponse" })

// ---------------------------------------------------------------------------------------------
// Errors of this service (the others are the platform's `HttpErrors`)

export class UnsupportedMediaType extends Contract.UntaggedError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  HttpErrors.fields,
  { status: 415, description: "The file is not PDF, DOCX, Markdown, HTML or plain text." }
) {}
