/**
 * The registry's tables. A community and everything in it is replaced as a whole by an import;
 * every table refers to its community with `ON DELETE CASCADE`, and children are deleted before
 * parents by the import itself (see `ImportsRepo`). Ids and keys use the `C` collation so that
 * pages come in the same order on every server (and on PGlite), whatever its locale.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const roles = "'producer', 'consumer', 'prosumer'"
const statuses = "'pending', 'active', 'suspended', 'inactive'"
const assetTypes = "'pv', 'storage', 'meter', 'ev_charger', 'heat_pump', 'load'"

const statements = [
  `CREATE TABLE community (
    key text COLLATE "C" PRIMARY KEY,
    name text NOT NULL,
    description text,
    type text,
    type_iri text,
    owner text,
    areas jsonb NOT NULL,
    topology jsonb NOT NULL DEFAULT '[]',
    legal jsonb,
    links jsonb,
    contact jsonb,
    settings jsonb,
    extra jsonb NOT NULL DEFAULT '{}',
    bundle jsonb NOT NULL,
    imported_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE participant (
    id text COLLATE "C" PRIMARY KEY,
    community_key text COLLATE "C" NOT NULL REFERENCES community (key) ON DELETE CASCADE,
    key text COLLATE "C" NOT NULL,
    user_id text NOT NULL,
    name text NOT NULL,
    type text,
    type_iri text,
    UNIQUE (community_key, key),
    UNIQUE (community_key, user_id)
  )`,
  `CREATE INDEX participant_user_id ON participant (user_id)`,
  `CREATE TABLE membership (
    id text COLLATE "C" PRIMARY KEY,
    community_key text COLLATE "C" NOT NULL REFERENCES community (key) ON DELETE CASCADE,
    key text COLLATE "C" NOT NULL,
    participant_id text COLLATE "C" NOT NULL UNIQUE REFERENCES participant (id) ON DELETE CASCADE,
    role text NOT NULL CHECK (role IN (${roles})),
    status text NOT NULL CHECK (status IN (${statuses})),
    area text NOT NULL,
    delivery_points jsonb NOT NULL DEFAULT '[]',
    extra jsonb NOT NULL DEFAULT '{}',
    UNIQUE (community_key, key)
  )`,
  `CREATE INDEX membership_community_role ON membership (community_key, role, id)`,
  `CREATE TABLE site (
    id text COLLATE "C" PRIMARY KEY,
    community_key text COLLATE "C" NOT NULL REFERENCES community (key) ON DELETE CASCADE,
    key text COLLATE "C" NOT NULL,
    member_id text COLLATE "C" REFERENCES membership (id) ON DELETE CASCADE,
    name text NOT NULL,
    area text NOT NULL,
    address text,
    location jsonb,
    delivery_point text,
    extra jsonb NOT NULL DEFAULT '{}',
    UNIQUE (community_key, key)
  )`,
  `CREATE INDEX site_member ON site (member_id, id)`,
  `CREATE TABLE asset (
    id text COLLATE "C" PRIMARY KEY,
    community_key text COLLATE "C" NOT NULL REFERENCES community (key) ON DELETE CASCADE,
    key text COLLATE "C" NOT NULL,
    member_id text COLLATE "C" NOT NULL REFERENCES membership (id) ON DELETE CASCADE,
    asset_type text NOT NULL CHECK (asset_type IN (${assetTypes})),
    name text NOT NULL,
    site_id text COLLATE "C" REFERENCES site (id) ON DELETE SET NULL,
    owner text,
    properties jsonb NOT NULL DEFAULT '{}',
    device jsonb,
    relationships jsonb,
    UNIQUE (community_key, key)
  )`,
  `CREATE INDEX asset_community_type ON asset (community_key, asset_type, id)`,
  `CREATE INDEX asset_member ON asset (member_id, id)`,
  `CREATE INDEX asset_site ON asset (site_id)`,
  `CREATE TABLE meter (
    asset_id text COLLATE "C" PRIMARY KEY REFERENCES asset (id) ON DELETE CASCADE,
    community_key text COLLATE "C" NOT NULL REFERENCES community (key) ON DELETE CASCADE,
    sensor_id text NOT NULL,
    meter_type text NOT NULL,
    pod text,
    protocol text,
    UNIQUE (community_key, sensor_id)
  )`,
  // The API's member: a membership with its participant.
  `CREATE VIEW member AS
    SELECT m.id, m.community_key, m.key, m.participant_id, p.user_id, p.name, p.type, p.type_iri,
           m.role, m.status, m.area, m.delivery_points, m.extra
    FROM membership m JOIN participant p ON p.id = m.participant_id`
]

export default Effect.gen(function*() {
  const sql = yield* SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
