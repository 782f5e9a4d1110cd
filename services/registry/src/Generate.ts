/**
 * Synthetic bundles of any size (benchmarks, tests): a community with `members` members spread
 * over a few areas, each with a delivery point, a home site, a meter measuring its assets, and
 * (cycling through the member number) PV, storage, an EV charger, a heat pump or a load.
 * Deterministic: the same options give the same text.
 */
import { CORE_SCHEMA, dump } from "js-yaml"

export interface Options {
  readonly community: string
  readonly members: number
  /** Name prefix, to tell communities apart. */
  readonly name?: string | undefined
}

const pad = (n: number, width: number) => String(n).padStart(width, "0")

export const bundle = (options: Options): string => {
  const areas = ["north", "south", "east", "west"]
  const members: Record<string, unknown> = {}
  const sites: Record<string, unknown> = {}
  const width = Math.max(5, String(options.members).length)
  for (let i = 0; i < options.members; i++) {
    const key = `m${pad(i, width)}`
    const pod = `${options.community.toUpperCase()}-POD-${pad(i, width)}`
    const area = areas[i % areas.length]!
    const assets: Record<string, Record<string, unknown>> = {}
    const measured: Array<string> = []
    const kind = i % 5
    if (kind <= 1) {
      assets["pv"] = { [`${key}-pv`]: { name: "Rooftop PV", site: `${key}-home`, rated_power: 3 + (i % 7), panel_type: "mono", orientation: 180, tilt_angle: 30, installation_date: "2024-05-01" } }
      measured.push(`${key}-pv`)
    }
    if (kind === 1) {
      assets["storage"] = { [`${key}-battery`]: { name: "Home battery", site: `${key}-home`, capacity: 10, battery_type: "lfp", relationships: { paired_with: `${key}-pv` } } }
      measured.push(`${key}-battery`)
    }
    if (kind === 2) assets["ev_charger"] = { [`${key}-ev`]: { name: "Wallbox", max_power: 7.4, charger_type: "ac_level2", connector_types: ["type2"], num_ports: 1 } }
    if (kind === 3) assets["heat_pump"] = { [`${key}-hp`]: { name: "Heat pump", thermal_power: 8, cop: 3.5, heat_pump_type: "air_to_water" } }
    if (kind === 4) assets["load"] = { [`${key}-load`]: { name: "Appliances", load_type: "appliance", rated_power: 3, controllable: true, flexibility_kw: 1 } }
    assets["meter"] = {
      [`${key}-meter`]: {
        name: "Main meter",
        site: `${key}-home`,
        sensor_id: `${options.community}-${key}-meter`,
        meter_type: "bidirectional",
        pod,
        protocol: "mqtt",
        ...(measured.length === 0 ? {} : { relationships: { measures: measured } })
      }
    }
    members[key] = {
      user_id: `${options.community}-user-${pad(i, width)}`,
      name: `${options.name ?? "Member"} ${i}`,
      type: "schema:Person",
      role: kind <= 1 ? "prosumer" : "consumer",
      area,
      status: "active",
      delivery_points: [{ id: pod, type: "pod", address: `Via Roma ${i + 1}` }],
      assets
    }
    sites[`${key}-home`] = { name: `Home of member ${i}`, member: key, area, delivery_point: pod }
  }
  return dump(
    {
      version: "1.0",
      schema_version: "0.4",
      community: {
        id: options.community,
        name: `${options.name ?? "Community"} ${options.community}`,
        areas: Object.fromEntries(areas.map((area) => [area, { name: area[0]!.toUpperCase() + area.slice(1) }]))
      },
      members,
      sites
    },
    { schema: CORE_SCHEMA, lineWidth: -1, noRefs: true }
  )
}
