/**
 * Bundles for the schema rules: each valid one must pass both the JSON Schema
 * (`schemas/community-bundle.v0.4.schema.json`) and the loader; each invalid one must fail both
 * with exactly the listed violations (JSON path and JSON Schema keyword).
 */

export interface ValidFixture {
  readonly name: string
  readonly yaml: string
}

export interface InvalidFixture extends ValidFixture {
  /** `[json path, keyword]` */
  readonly violations: ReadonlyArray<readonly [string, string]>
}

/** The smallest valid bundle; `parts` replace or add top-level sections (YAML text). */
export const bundle = (parts: { readonly head?: string; readonly community?: string; readonly members?: string; readonly tail?: string } = {}) =>
  [
    parts.head ?? "version: \"1\"\nschema_version: \"0.4\"",
    parts.community ?? "community:\n  id: c1\n  name: Community One\n  areas:\n    north: { name: North }",
    parts.members ?? "members:\n  m1: { user_id: u-1, name: Ann, role: consumer, area: north, status: active }",
    parts.tail ?? ""
  ].join("\n") + "\n"

/** A bundle whose member m1 has the given assets (YAML under `assets:`, indented 6). */
export const withAssets = (assets: string, tail?: string) =>
  bundle({
    tail,
    members: `members:\n  m1:\n    user_id: u-1\n    name: Ann\n    role: prosumer\n    area: north\n    status: active\n    delivery_points: [{ id: POD-1, type: pod }]\n    assets:\n${
      assets.trim().split("\n").map((line) => `      ${line}`).join("\n")
    }`
  })

const member = (fields: string) => bundle({ members: `members:\n  m1: { ${fields} }` })
const ok = "user_id: u-1, name: Ann, role: consumer, area: north, status: active"

export const validFixtures: ReadonlyArray<ValidFixture> = [
  { name: "minimal bundle", yaml: bundle() },
  { name: "numeric version", yaml: bundle({ head: "version: 1.2\nschema_version: \"0.4\"" }) },
  { name: "no members", yaml: bundle({ members: "members: {}" }) },
  {
    name: "every community field",
    yaml: bundle({
      community: `community:
  id: c-1_x
  name: C
  description: d
  type: schema:Organization
  owner: https://c.example.org
  areas:
    north: { name: North, location: { lat: -90, lon: 180 }, topology: [ps1], geometry: { type: Point, coordinates: [1, 2] } }
  legal: { name: L, vat: IT1, fiscal_code: "1", legal_form: f, registration_number: r, registered_office: o }
  links: { website: https://c.example.org, logo: https://c.example.org/l.png, privacy_policy: https://c.example.org/p, terms: urn:x:terms, statute: https://c.example.org/s, regulations: https://c.example.org/r }
  contact: { email: a@c.example.org, pec: pec@c.example.org, phone: "+39", address: here }
  settings: { timezone: Europe/Rome, currency: EUR, energy_unit: MWh, power_unit: W }
  topology:
    - { id: ps1, type: primary_substation, name: P, operator: dso }
    - { id: f1, type: feeder, parent: ps1, area: { type: geojson, geometry: { type: Point } } }
  future_field: kept`
    })
  },
  {
    name: "metadata and context",
    yaml: bundle({
      head: `version: "1"\nschema_version: "0.4"\nmetadata: { created: 2024-02-29, updated: 2025-01-01, updated_by: me, description: d }\ncontext: { base_iri: https://c.example.org/, prefixes: { ex: https://ex.example.org/, ex2_b: "urn:ex:" } }`
    })
  },
  {
    name: "every member field",
    yaml: member(`user_id: u-1, name: Ann, type: schema:Person, role: prosumer, area: north, status: pending, delivery_points: [{ id: POD-1, type: pod, description: d, address: a, tariff: t, active: false }], extra_field: 1`)
  },
  {
    name: "every asset type with every field",
    yaml: withAssets(`pv:
  p1: { name: PV, site: s1, owner: acme, rated_power: 0, panel_type: bifacial, inverter_power: 3, orientation: 360, tilt_angle: 90, installation_date: 2024-01-31, device: { type: inverter, model: X, serial_number: "1", mac_address: "AA:bb:cc:00:11:22", firmware_version: "1.0" }, relationships: { measures: [], paired_with: null } }
storage:
  b1: { name: B, capacity: 10, max_charge_power: 5, max_discharge_power: 5, battery_type: sodium_ion, round_trip_efficiency: 100, installation_date: 2024-01-01 }
meter:
  mt1: { name: M, sensor_id: s-1, meter_type: export, pod: POD-1, protocol: dlms, installation_date: 2024-01-01, relationships: { measures: [p1, b1] } }
ev_charger:
  e1: { name: E, max_power: 22, charger_type: dc_ultra_fast, connector_types: [ccs2, chademo], smart_charging: true, bidirectional: true, num_ports: 2 }
heat_pump:
  h1: { name: H, thermal_power: 8, electrical_power: 2, cop: 4, eer: 3, scop: 4, seer: 5, heat_pump_type: ground_source, reversible: false, refrigerant: R290 }
load:
  l1: { name: L, load_type: pumping, rated_power: 1, min_power: 0, controllable: true, priority: critical, flexibility_kw: 0.5 }`, "sites:\n  s1: { name: Home, member: m1, area: north }")
  },
  {
    name: "sites",
    yaml: bundle({ tail: "sites:\n  s1: { name: Home, member: m1, area: north, address: here, location: { lat: 1, lon: 2 } }\n  s2: { name: Shared, area: north }" })
  }
]

export const invalidFixtures: ReadonlyArray<InvalidFixture> = [
  // top level
  { name: "a list", yaml: "- a\n", violations: [["$", "type"]] },
  { name: "a string", yaml: "bundle\n", violations: [["$", "type"]] },
  {
    name: "empty mapping",
    yaml: "{}\n",
    violations: [["$.version", "required"], ["$.schema_version", "required"], ["$.community", "required"], ["$.members", "required"]]
  },
  { name: "unquoted schema_version", yaml: bundle({ head: "version: \"1\"\nschema_version: 0.4" }), violations: [["$.schema_version", "const"]] },
  { name: "other schema_version", yaml: bundle({ head: "version: \"1\"\nschema_version: \"0.3\"" }), violations: [["$.schema_version", "const"]] },
  { name: "boolean version", yaml: bundle({ head: "version: true\nschema_version: \"0.4\"" }), violations: [["$.version", "type"]] },
  { name: "members a list", yaml: bundle({ members: "members: [m1]" }), violations: [["$.members", "type"]] },
  { name: "member key with a space", yaml: bundle({ members: `members:\n  "m 1": { ${ok} }` }), violations: [["$.members['m 1']", "propertyNames"]] },
  // metadata and context
  {
    name: "metadata dates",
    yaml: bundle({ head: "version: \"1\"\nschema_version: \"0.4\"\nmetadata: { created: 2025-02-29, updated: yesterday }" }),
    violations: [["$.metadata.created", "format"], ["$.metadata.updated", "format"]]
  },
  {
    name: "context is closed and its IRIs absolute",
    yaml: bundle({ head: "version: \"1\"\nschema_version: \"0.4\"\ncontext: { base: x, base_iri: relative/path, prefixes: { ex: not an iri, \"1x\": https://x.example.org/ } }" }),
    violations: [
      ["$.context.base", "additionalProperties"],
      ["$.context.base_iri", "format"],
      ["$.context.prefixes.ex", "format"],
      ["$.context.prefixes['1x']", "propertyNames"]
    ]
  },
  // community
  {
    name: "community id and name",
    yaml: bundle({ community: "community:\n  id: Big_C\n  name: \"\"\n  areas: { north: { name: North } }" }),
    violations: [["$.community.id", "pattern"], ["$.community.name", "minLength"]]
  },
  {
    name: "community id too long",
    yaml: bundle({ community: `community:\n  id: ${"c".repeat(129)}\n  name: C\n  areas: { north: { name: North } }` }),
    violations: [["$.community.id", "maxLength"]]
  },
  {
    name: "community without areas",
    yaml: bundle({ community: "community:\n  id: c1\n  name: C\n  areas: {}" }),
    violations: [["$.community.areas", "minProperties"]]
  },
  {
    name: "community missing everything",
    yaml: bundle({ community: "community: {}" }),
    violations: [["$.community.id", "required"], ["$.community.name", "required"], ["$.community.areas", "required"]]
  },
  {
    name: "areas",
    yaml: bundle({
      community: "community:\n  id: c1\n  name: C\n  areas:\n    north: { location: { lat: 91, lon: -181 }, topology: x, geometry: [] }\n    \"-south\": { name: S }"
    }),
    violations: [
      ["$.community.areas.north.name", "required"],
      ["$.community.areas.north.location.lat", "maximum"],
      ["$.community.areas.north.location.lon", "minimum"],
      ["$.community.areas.north.topology", "type"],
      ["$.community.areas.north.geometry", "type"],
      ["$.community.areas['-south']", "propertyNames"]
    ]
  },
  {
    name: "links, contact, settings",
    yaml: bundle({
      community: `community:
  id: c1
  name: C
  areas: { north: { name: North } }
  links: { website: www.example.org, logo: 3 }
  contact: { email: not-an-email, pec: a@b }
  settings: { currency: eur, energy_unit: kwh, power_unit: GW }`
    }),
    violations: [
      ["$.community.links.website", "format"],
      ["$.community.links.logo", "type"],
      ["$.community.contact.email", "format"],
      ["$.community.contact.pec", "format"],
      ["$.community.settings.currency", "pattern"],
      ["$.community.settings.energy_unit", "enum"],
      ["$.community.settings.power_unit", "enum"]
    ]
  },
  {
    name: "topology nodes",
    yaml: bundle({
      community: `community:
  id: c1
  name: C
  areas: { north: { name: North } }
  topology:
    - { type: substation }
    - { id: f1, type: feeder, parent: "", area: { type: shape } }`
    }),
    violations: [
      ["$.community.topology[0].id", "required"],
      ["$.community.topology[0].type", "enum"],
      ["$.community.topology[1].parent", "pattern"],
      ["$.community.topology[1].area.type", "const"],
      ["$.community.topology[1].area.geometry", "required"]
    ]
  },
  // members
  { name: "member is a string", yaml: bundle({ members: "members:\n  m1: ann" }), violations: [["$.members.m1", "type"]] },
  {
    name: "member missing everything",
    yaml: bundle({ members: "members:\n  m1: {}" }),
    violations: [
      ["$.members.m1.user_id", "required"],
      ["$.members.m1.name", "required"],
      ["$.members.m1.role", "required"],
      ["$.members.m1.area", "required"],
      ["$.members.m1.status", "required"]
    ]
  },
  {
    name: "member values",
    yaml: member("user_id: 7, name: Ann, type: \"\", role: operator, area: no area, status: gone"),
    violations: [
      ["$.members.m1.user_id", "type"],
      ["$.members.m1.type", "minLength"],
      ["$.members.m1.role", "enum"],
      ["$.members.m1.area", "pattern"],
      ["$.members.m1.status", "enum"]
    ]
  },
  {
    name: "delivery points",
    yaml: member(`${ok}, delivery_points: [{ id: "IT 1", type: meter, active: "yes" }, { type: pod }, pod-3]`),
    violations: [
      ["$.members.m1.delivery_points[0].id", "pattern"],
      ["$.members.m1.delivery_points[0].type", "enum"],
      ["$.members.m1.delivery_points[0].active", "type"],
      ["$.members.m1.delivery_points[1].id", "required"],
      ["$.members.m1.delivery_points[2]", "type"]
    ]
  },
  // assets
  {
    name: "unknown asset type",
    yaml: withAssets("ev-charger: {}\nbattery: {}"),
    violations: [["$.members.m1.assets['ev-charger']", "additionalProperties"], ["$.members.m1.assets.battery", "additionalProperties"]]
  },
  {
    name: "asset key and name",
    yaml: withAssets("pv:\n  \"p 1\": { name: PV }\n  p2: { rated_power: 3 }\n  p3: { name: \"\" }"),
    violations: [["$.members.m1.assets.pv['p 1']", "propertyNames"], ["$.members.m1.assets.pv.p2.name", "required"], ["$.members.m1.assets.pv.p3.name", "minLength"]]
  },
  {
    name: "pv ranges and enums",
    yaml: withAssets("pv:\n  p1: { name: PV, rated_power: -1, panel_type: perovskite, orientation: 361, tilt_angle: -5, installation_date: 2024-13-01, site: 4 }"),
    violations: [
      ["$.members.m1.assets.pv.p1.rated_power", "minimum"],
      ["$.members.m1.assets.pv.p1.panel_type", "enum"],
      ["$.members.m1.assets.pv.p1.orientation", "maximum"],
      ["$.members.m1.assets.pv.p1.tilt_angle", "minimum"],
      ["$.members.m1.assets.pv.p1.installation_date", "format"],
      ["$.members.m1.assets.pv.p1.site", "type"]
    ]
  },
  {
    name: "storage",
    yaml: withAssets("storage:\n  b1: { name: B, capacity: ten, battery_type: nicd, round_trip_efficiency: 101 }"),
    violations: [
      ["$.members.m1.assets.storage.b1.capacity", "type"],
      ["$.members.m1.assets.storage.b1.battery_type", "enum"],
      ["$.members.m1.assets.storage.b1.round_trip_efficiency", "maximum"]
    ]
  },
  {
    name: "meter requirements",
    yaml: withAssets("meter:\n  mt1: { name: M }\n  mt2: { name: M, sensor_id: \"\", meter_type: smart, protocol: zigbee, pod: \"a b\" }"),
    violations: [
      ["$.members.m1.assets.meter.mt1.sensor_id", "required"],
      ["$.members.m1.assets.meter.mt1.meter_type", "required"],
      ["$.members.m1.assets.meter.mt2.sensor_id", "minLength"],
      ["$.members.m1.assets.meter.mt2.meter_type", "enum"],
      ["$.members.m1.assets.meter.mt2.protocol", "enum"],
      ["$.members.m1.assets.meter.mt2.pod", "pattern"]
    ]
  },
  {
    name: "ev charger",
    yaml: withAssets("ev_charger:\n  e1: { name: E, connector_types: [type3], num_ports: 1.5 }\n  e2: { name: E, max_power: 3, charger_type: ac_level1, num_ports: 0, smart_charging: 1 }"),
    violations: [
      ["$.members.m1.assets.ev_charger.e1.max_power", "required"],
      ["$.members.m1.assets.ev_charger.e1.charger_type", "required"],
      ["$.members.m1.assets.ev_charger.e1.connector_types[0]", "enum"],
      ["$.members.m1.assets.ev_charger.e1.num_ports", "type"],
      ["$.members.m1.assets.ev_charger.e2.num_ports", "minimum"],
      ["$.members.m1.assets.ev_charger.e2.smart_charging", "type"]
    ]
  },
  {
    name: "heat pump and load",
    yaml: withAssets("heat_pump:\n  h1: { name: H, cop: -1, heat_pump_type: solar }\nload:\n  l1: { name: L, priority: urgent, load_type: lighting, flexibility_kw: -2 }"),
    violations: [
      ["$.members.m1.assets.heat_pump.h1.thermal_power", "required"],
      ["$.members.m1.assets.heat_pump.h1.cop", "minimum"],
      ["$.members.m1.assets.heat_pump.h1.heat_pump_type", "enum"],
      ["$.members.m1.assets.load.l1.priority", "enum"],
      ["$.members.m1.assets.load.l1.flexibility_kw", "minimum"]
    ]
  },
  {
    name: "device and relationships",
    yaml: withAssets("pv:\n  p1: { name: PV, device: { mac_address: \"AA-BB-CC-DD-EE-FF\", model: 3 }, relationships: { measures: p2, paired_with: \"x y\" } }"),
    violations: [
      ["$.members.m1.assets.pv.p1.device.mac_address", "pattern"],
      ["$.members.m1.assets.pv.p1.device.model", "type"],
      ["$.members.m1.assets.pv.p1.relationships.measures", "type"],
      ["$.members.m1.assets.pv.p1.relationships.paired_with", "pattern"]
    ]
  },
  // sites
  {
    name: "sites",
    yaml: bundle({ tail: "sites:\n  s1: { member: m1 }\n  s2: { name: S, area: north, location: { lat: 1 }, delivery_point: \"\" }\n  \"s 3\": { name: S, area: north }" }),
    violations: [
      ["$.sites.s1.name", "required"],
      ["$.sites.s1.area", "required"],
      ["$.sites.s2.location.lon", "required"],
      ["$.sites.s2.delivery_point", "pattern"],
      ["$.sites['s 3']", "propertyNames"]
    ]
  }
]
