/**
 * Attachments (uploads and training materials), their chunks with embedding and full-text
 * vectors, conversations and messages.
 *
 * pgvector must be available: PGlite ships it; on a PostgreSQL server without it the migration
 * stops with a message naming the extension (`VectorStore.requireExtension`).
 *
 * `chunks.embedding` has no fixed dimension: the embedder (and so the dimension) is chosen at
 * start, and `VectorStore` creates the HNSW index of the current embedder then, on the
 * expression `embedding::vector(<dimensions>)`, restricted to that embedder's rows.
 */
import { Migrations } from "@rec/db"
import { SqlClient } from "@effect/sql"
import * as Effect from "effect/Effect"
import { requireExtension } from "../VectorStore.js"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* requireExtension
  yield* Migrations.createExtension("vector")

  yield* sql`
    CREATE TABLE attachments (
      id uuid PRIMARY KEY,
      owner_id text,
      source text NOT NULL CHECK (source IN ('upload', 'training_material')),
      filename text NOT NULL,
      content_type text NOT NULL,
      size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
      sha256 text NOT NULL,
      storage_key text NOT NULL UNIQUE,
      title text,
      location text,
      status text NOT NULL CHECK (status IN ('indexed', 'empty')),
      chunk_count integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      indexed_at timestamptz,
      CHECK ((source = 'upload') = (owner_id IS NOT NULL)),
      CHECK ((source = 'training_material') = (location IS NOT NULL))
    )`
  yield* sql`CREATE INDEX attachments_owner_created ON attachments (owner_id, created_at DESC, id)`
  yield* sql`CREATE UNIQUE INDEX attachments_training_location ON attachments (location) WHERE source = 'training_material'`

  yield* sql`
    CREATE TABLE chunks (
      id bigserial PRIMARY KEY,
      attachment_id uuid NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
      owner_id text,
      chunk_index integer NOT NULL,
      heading text,
      text text NOT NULL,
      token_count integer NOT NULL,
      embedder text,
      embedding vector,
      tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', coalesce(heading, '')), 'A') || setweight(to_tsvector('english', text), 'B')
      ) STORED,
      UNIQUE (attachment_id, chunk_index)
    )`
  yield* sql`CREATE INDEX chunks_owner_embedder ON chunks (owner_id, embedder)`
  yield* sql`CREATE INDEX chunks_embedder ON chunks (embedder)`
  yield* sql`CREATE INDEX chunks_tsv ON chunks USING gin (tsv)`

  yield* sql`
    CREATE TABLE conversations (
      id uuid PRIMARY KEY,
      owner_id text NOT NULL,
      title text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX conversations_owner_updated ON conversations (owner_id, updated_at DESC, id)`

  yield* sql`
    CREATE TABLE messages (
      id uuid PRIMARY KEY,
      conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
      seq bigserial NOT NULL,
      role text NOT NULL CHECK (role IN ('user', 'assistant')),
      content text NOT NULL,
      status text NOT NULL CHECK (status IN ('complete', 'interrupted', 'failed')),
      error text,
      sources jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX messages_conversation_seq ON messages (conversation_id, seq)`
})
