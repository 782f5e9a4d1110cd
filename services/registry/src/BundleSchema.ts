/**
 * The community bundle, format v0.4, as the Effect Schema the loader decodes with. It states the
 * same rules as `schemas/community-bundle.v0.4.schema.json` (draft-07), which editors and other
 * tools use; `test/SchemaParity.test.ts` runs shared fixtures through both and requires the same
 * violations (JSON path and JSON Schema keyword) from each.
 *
 * The v0.4 format keeps fields it does not know (`additionalProperties: true`): they are stored
 * and exported again. Two exceptions, where an unknown key is a typo rather than data: the asset
 * type maps under `assets` (`ev-charger`) and `context` (`ClosedObjects`, checked by
 * `BundleCheck`: a parse option would close every object below them too).
 *
 * Rules no JSON Schema states (references between parts, keys unique across the bundle, CURIE
 * prefixes, owners, names of map keys) are checked by `BundleCheck`.
 */
import formatsModule from "ajv-formats/dist/formats.js"
import * as Schema from "effect/Schema"
import { AssetTypes, MemberStatuses, Roles } from "./Domain.js"

// ---------------------------------------------------------------------------------------------
// Shared definitions

export const SCHEMA_VERSION = "0.4"

/** `community.id`: the community key (v0.4's pattern; at most 128 characters). */
export const COMMUNITY_KEY_PATTERN = "^[a-z0-9_-]+$"
export const COMMUNITY_KEY_MAX_LENGTH = 128

/** Keys of members, areas, sites, assets and topology nodes (they become IRI path segments). */
export const KEY_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"

/** Delivery point ids (PODs, EANs, ...): no white space, at most 128 characters. */
export const DELIVERY_POINT_PATTERN = "^\\S{1,128}$"

/** `context.prefixes` names. */
export const PREFIX_PATTERN = "^[A-Za-z][A-Za-z0-9_-]*$"

export const CURRENCY_PATTERN = "^[A-Z]{3}$"
export const MAC_ADDRESS_PATTERN = "^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$"

export const TopologyNodeTypes = ["primary_substation", "secondary_substation", "transformer", "feeder"] as const
export const DeliveryPointTypes = ["pod", "cups", "prm", "malo", "ean", "mpan", "other"] as const
export const EnergyUnits = ["Wh", "kWh", "MWh"] as const
export const PowerUnits = ["W", "kW", "MW"] as const
export const PanelTypes = ["mono", "poly", "thin_film", "bifacial"] as const
export const BatteryTypes = ["lithium_ion", "lfp", "lead_acid", "flow_battery", "sodium_ion", "solid_state", "other"] as const
export const MeterTypes = ["consumption", "production", "bidirectional", "import", "export"] as const
export const MeterProtocols = ["modbus", "mqtt", "rest_api", "mbus", "dlms", "sunspec", "other"] as const
export const ChargerTypes = ["ac_level1", "ac_level2", "dc_fast", "dc_ultra_fast"] as const
export const ConnectorTypes = ["type1", "type2", "ccs1", "ccs2", "chademo", "tesla", "gbt"] as const
export const HeatPumpTypes = ["air_to_air", "air_to_water", "ground_source", "water_source"] as const
export const LoadTypes = ["hvac", "lighting", "appliance", "industrial", "process", "refrigeration", "pumping", "other"] as const
export const LoadPriorities = ["critical", "high", "medium", "low"] as const

// ajv-formats is CommonJS (`exports.fullFormats`): TypeScript (NodeNext) types the default import
// as the module object, while bundlers may hand over `module.exports` itself.
const fullFormats = (formatsModule as unknown as { fullFormats?: typeof formatsModule.fullFormats }).fullFormats ??
  formatsModule.fullFormats

type FormatName = "date" | "uri" | "email"

/** The same format checks ajv-formats applies to the JSON Schema (`full` mode). */
export const formatCheck = (name: FormatName): (value: string) => boolean => {
  const format = fullFormats[name] as unknown
  if (format instanceof RegExp) return (value) => format.test(value)
  if (typeof format === "function") return format as (value: string) => boolean
  const validate = (format as { validate: RegExp | ((value: string) => boolean) }).validate
  return validate instanceof RegExp ? (value) => validate.test(value) : validate
}

const formatted = (name: FormatName, description: string) => {
  const check = formatCheck(name)
  return Schema.String.pipe(
    Schema.filter((value) => check(value), { jsonSchema: { format: name }, description })
  )
}

const pattern = (source: string, description: string) =>
  Schema.String.pipe(Schema.pattern(new RegExp(source), { description }))

const NonEmpty = Schema.String.pipe(Schema.minLength(1, { description: "a non-empty string" }))
const Text = Schema.String
const Bool = Schema.Boolean
const Num = Schema.Number
const NonNegative = Num.pipe(Schema.greaterThanOrEqualTo(0, { description: "a number >= 0" }))
const between = (min: number, max: number) =>
  Num.pipe(
    Schema.greaterThanOrEqualTo(min, { description: `a number >= ${min}` }),
    Schema.lessThanOrEqualTo(max, { description: `a number <= ${max}` })
  )
const enumOf = <const L extends ReadonlyArray<string>>(values: L) => Schema.Literal(...values)

/**
 * One allowed string. Not a `Schema.Literal`: inside an optional property (a union with
 * `undefined`) Effect would pick union members by such a field and report only its mismatch,
 * hiding the member's other problems.
 */
const constant = <const V extends string>(value: V) =>
  Schema.String.pipe(
    Schema.filter((s): s is V => s === value, { jsonSchema: { const: value }, description: JSON.stringify(value) })
  )

export const Key = pattern(KEY_PATTERN, "a key: letters, digits, '.', '_' or '-', starting with a letter or digit")
export const DateOnly = formatted("date", "a date (YYYY-MM-DD)")
export const Uri = formatted("uri", "an absolute URI")
export const Email = formatted("email", "an e-mail address")
/** An IRI or a CURIE whose prefix the bundle declares (`schema:Person`); expanded by `Iris`. */
export const IriOrCurie = NonEmpty

/** Open maps: the value schema for every key; key names are checked by `BundleCheck`. */
const mapOf = <A, I>(value: Schema.Schema<A, I>) => Schema.Record({ key: Schema.String, value })

const opt = Schema.optional

// ---------------------------------------------------------------------------------------------
// Property orders: the JSON Schema's `properties`, and the order an export writes known keys in.

export const Properties = {
  bundle: ["version", "schema_version", "metadata", "context", "community", "members", "sites"],
  metadata: ["created", "updated", "updated_by", "description"],
  context: ["base_iri", "prefixes"],
  community: ["id", "name", "description", "type", "owner", "areas", "legal", "links", "contact", "settings", "topology"],
  area: ["name", "location", "topology", "geometry"],
  location: ["lat", "lon"],
  legal: ["name", "vat", "fiscal_code", "legal_form", "registration_number", "registered_office"],
  links: ["website", "logo", "privacy_policy", "terms", "statute", "regulations"],
  contact: ["email", "pec", "phone", "address"],
  settings: ["timezone", "currency", "energy_unit", "power_unit"],
  topologyNode: ["id", "type", "name", "operator", "parent", "area"],
  member: ["user_id", "name", "type", "role", "area", "status", "delivery_points", "assets"],
  deliveryPoint: ["id", "type", "description", "address", "tariff", "active"],
  assets: [...AssetTypes],
  device: ["type", "model", "serial_number", "mac_address", "firmware_version"],
  relationships: ["measures", "paired_with"],
  assetCommon: ["name", "site", "owner"],
  assetTail: ["device", "relationships"],
  pv: ["rated_power", "panel_type", "inverter_power", "orientation", "tilt_angle", "installation_date"],
  storage: ["capacity", "max_charge_power", "max_discharge_power", "battery_type", "round_trip_efficiency", "installation_date"],
  meter: ["sensor_id", "meter_type", "pod", "protocol", "installation_date"],
  ev_charger: ["max_power", "charger_type", "connector_types", "smart_charging", "bidirectional", "num_ports"],
  heat_pump: [
    "thermal_power",
    "electrical_power",
    "cop",
    "eer",
    "scop",
    "seer",
    "heat_pump_type",
    "reversible",
    "refrigerant"
  ],
  load: ["load_type", "rated_power", "min_power", "controllable", "priority", "flexibility_kw"],
  site: ["name", "member", "area", "address", "location", "delivery_point"]
} as const

const assetPropertyLists: Readonly<Record<string, ReadonlyArray<string>>> = Object.fromEntries(
  AssetTypes.map((type) => [type, [...Properties.assetCommon, ...Properties[type], ...Properties.assetTail]])
)

/** Every property of an asset of the type, in export order. */
export const assetProperties = (type: (typeof AssetTypes)[number]): ReadonlyArray<string> => assetPropertyLists[type]!

// ---------------------------------------------------------------------------------------------
// Parts

export const Location = Schema.Struct({
  lat: between(-90, 90),
  lon: between(-180, 180)
})

export const Metadata = Schema.Struct({
  created: opt(DateOnly),
  updated: opt(DateOnly),
  updated_by: opt(Text),
  description: opt(Text)
})

export const Context = Schema.Struct({
  base_iri: opt(Uri),
  prefixes: opt(mapOf(Uri))
})

export const Area = Schema.Struct({
  name: NonEmpty,
  location: opt(Location),
  topology: opt(Schema.Array(Key)),
  geometry: opt(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

export const TopologyNode = Schema.Struct({
  id: Key,
  type: enumOf(TopologyNodeTypes),
  name: opt(Text),
  operator: opt(NonEmpty),
  parent: opt(Key),
  area: opt(Schema.Struct({ type: constant("geojson"), geometry: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }))
})

export const Legal = Schema.Struct({
  name: opt(Text),
  vat: opt(Text),
  fiscal_code: opt(Text),
  legal_form: opt(Text),
  registration_number: opt(Text),
  registered_office: opt(Text)
})

export const Links = Schema.Struct({
  website: opt(Uri),
  logo: opt(Uri),
  privacy_policy: opt(Uri),
  terms: opt(Uri),
  statute: opt(Uri),
  regulations: opt(Uri)
})

export const Contact = Schema.Struct({
  email: opt(Email),
  pec: opt(Email),
  phone: opt(Text),
  address: opt(Text)
})

export const Settings = Schema.Struct({
  timezone: opt(Text),
  currency: opt(pattern(CURRENCY_PATTERN, "an ISO 4217 currency code (three capital letters)")),
  energy_unit: opt(enumOf(EnergyUnits)),
  power_unit: opt(enumOf(PowerUnits))
})

export const Areas = mapOf(Area).pipe(
  Schema.filter((areas) => Object.keys(areas).length >= 1, {
    jsonSchema: { minProperties: 1 },
    description: "at least one area"
  })
)

export const Community = Schema.Struct({
  id: pattern(COMMUNITY_KEY_PATTERN, "a community key: lower-case letters, digits, '_' or '-'").pipe(
    Schema.maxLength(COMMUNITY_KEY_MAX_LENGTH, { description: `at most ${COMMUNITY_KEY_MAX_LENGTH} characters` })
  ),
  name: NonEmpty,
  description: opt(Text),
  type: opt(IriOrCurie),
  owner: opt(NonEmpty),
  areas: Areas,
  legal: opt(Legal),
  links: opt(Links),
  contact: opt(Contact),
  settings: opt(Settings),
  topology: opt(Schema.Array(TopologyNode))
})

export const DeliveryPoint = Schema.Struct({
  id: pattern(DELIVERY_POINT_PATTERN, "a delivery point id (no white space, at most 128 characters)"),
  type: enumOf(DeliveryPointTypes),
  description: opt(Text),
  address: opt(Text),
  tariff: opt(Text),
  active: opt(Bool)
})

export const Device = Schema.Struct({
  type: opt(Text),
  model: opt(Text),
  serial_number: opt(Text),
  mac_address: opt(pattern(MAC_ADDRESS_PATTERN, "a MAC address (XX:XX:XX:XX:XX:XX)")),
  firmware_version: opt(Text)
})

export const Relationships = Schema.Struct({
  measures: opt(Schema.Array(Key)),
  paired_with: opt(Schema.NullOr(Key))
})

const assetFields = {
  name: NonEmpty,
  site: opt(Key),
  owner: opt(NonEmpty),
  device: opt(Device),
  relationships: opt(Relationships)
}

export const Pv = Schema.Struct({
  ...assetFields,
  rated_power: opt(NonNegative),
  panel_type: opt(enumOf(PanelTypes)),
  inverter_power: opt(NonNegative),
  orientation: opt(between(0, 360)),
  tilt_angle: opt(between(0, 90)),
  installation_date: opt(DateOnly)
})

export const Storage = Schema.Struct({
  ...assetFields,
  capacity: opt(NonNegative),
  max_charge_power: opt(NonNegative),
  max_discharge_power: opt(NonNegative),
  battery_type: opt(enumOf(BatteryTypes)),
  round_trip_efficiency: opt(between(0, 100)),
  installation_date: opt(DateOnly)
})

export const Meter = Schema.Struct({
  ...assetFields,
  sensor_id: NonEmpty,
  meter_type: enumOf(MeterTypes),
  pod: opt(pattern(DELIVERY_POINT_PATTERN, "a delivery point id")),
  protocol: opt(enumOf(MeterProtocols)),
  installation_date: opt(DateOnly)
})

export const EvCharger = Schema.Struct({
  ...assetFields,
  max_power: NonNegative,
  charger_type: enumOf(ChargerTypes),
  connector_types: opt(Schema.Array(enumOf(ConnectorTypes))),
  smart_charging: opt(Bool),
  bidirectional: opt(Bool),
  num_ports: opt(Num.pipe(Schema.int({ jsonSchema: { type: "integer" }, description: "an integer" }), Schema.greaterThanOrEqualTo(1, { description: "a number >= 1" })))
})

export const HeatPump = Schema.Struct({
  ...assetFields,
  thermal_power: NonNegative,
  electrical_power: opt(NonNegative),
  cop: opt(NonNegative),
  eer: opt(NonNegative),
  scop: opt(NonNegative),
  seer: opt(NonNegative),
  heat_pump_type: opt(enumOf(HeatPumpTypes)),
  reversible: opt(Bool),
  refrigerant: opt(Text)
})

export const Load = Schema.Struct({
  ...assetFields,
  load_type: opt(enumOf(LoadTypes)),
  rated_power: opt(NonNegative),
  min_power: opt(NonNegative),
  controllable: opt(Bool),
  priority: opt(enumOf(LoadPriorities)),
  flexibility_kw: opt(NonNegative)
})

export const AssetSchemas = {
  pv: Pv,
  storage: Storage,
  meter: Meter,
  ev_charger: EvCharger,
  heat_pump: HeatPump,
  load: Load
} as const

export const Assets = Schema.Struct({
  pv: opt(mapOf(Pv)),
  storage: opt(mapOf(Storage)),
  meter: opt(mapOf(Meter)),
  ev_charger: opt(mapOf(EvCharger)),
  heat_pump: opt(mapOf(HeatPump)),
  load: opt(mapOf(Load))
})

export const Member = Schema.Struct({
  user_id: NonEmpty,
  name: NonEmpty,
  type: opt(IriOrCurie),
  role: enumOf(Roles),
  area: Key,
  status: enumOf(MemberStatuses),
  delivery_points: opt(Schema.Array(DeliveryPoint)),
  assets: opt(Assets)
})

export const Site = Schema.Struct({
  name: NonEmpty,
  member: opt(Key),
  area: Key,
  address: opt(Text),
  location: opt(Location),
  delivery_point: opt(pattern(DELIVERY_POINT_PATTERN, "a delivery point id"))
})

export const Bundle = Schema.Struct({
  version: Schema.Union(Schema.String, Schema.Number),
  schema_version: Schema.Literal(SCHEMA_VERSION),
  metadata: opt(Metadata),
  context: opt(Context),
  community: Community,
  members: mapOf(Member),
  sites: opt(mapOf(Site))
})

/**
 * The bundle with its members and sites left unchecked: `Bundles` checks those one at a time
 * (`Member`, `Site`), so a large bundle is never copied whole by the decoder (same rules, same
 * violations, a fraction of the memory).
 */
export const BundleShell = Schema.Struct({
  ...Bundle.fields,
  members: mapOf(Schema.Unknown),
  sites: opt(mapOf(Schema.Unknown))
})

export type Bundle = typeof Bundle.Type
export type Member = typeof Member.Type
export type Site = typeof Site.Type
export type AnyAsset = typeof Pv.Type | typeof Storage.Type | typeof Meter.Type | typeof EvCharger.Type | typeof HeatPump.Type | typeof Load.Type

/** Objects that allow no other keys than their properties (`additionalProperties: false`). */
export const ClosedObjects: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly properties: ReadonlyArray<string> }> = [
  { path: ["context"], properties: Properties.context },
  { path: ["members", "*", "assets"], properties: Properties.assets }
]

/** The maps whose keys must match a pattern (`propertyNames`), as paths with `*` for any key. */
export const KeyedMaps: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly pattern: string }> = [
  { path: ["context", "prefixes"], pattern: PREFIX_PATTERN },
  { path: ["community", "areas"], pattern: KEY_PATTERN },
  { path: ["members"], pattern: KEY_PATTERN },
  ...AssetTypes.map((type) => ({ path: ["members", "*", "assets", type], pattern: KEY_PATTERN })),
  { path: ["sites"], pattern: KEY_PATTERN }
]
