/**
 * The simulated world: three distribution networks in Trentino (the reference deployment is
 * Italian) and one renewable energy community with its participants. Network ids are the
 * aliases of the DSO organizations in dev/identities.yaml and the first two participants are
 * its REC users, so a dev token reads data here (a test keeps the two files in step).
 * Everything else (lines, segments, substations, weather, meter readings) is generated from
 * the seed by `Grid.ts` and `Energy.ts`.
 */

export interface Municipality {
  readonly name: string
  /** [longitude, latitude] of the town centre. */
  readonly at: readonly [number, number]
  /** Elevation of the town centre in metres. */
  readonly elevation: number
}

export interface OperationalUnit {
  readonly name: string
  readonly municipalities: ReadonlyArray<Municipality>
}

export interface PrimarySubstationSpec {
  /** Short code used in feeder and segment ids. */
  readonly code: string
  readonly name: string
  /** The municipality it stands in. */
  readonly municipality: string
  readonly feeders: number
}

export interface NetworkSpec {
  readonly id: string
  /** Short prefix of asset ids. */
  readonly prefix: string
  readonly name: string
  readonly operationalUnits: ReadonlyArray<OperationalUnit>
  readonly primarySubstations: ReadonlyArray<PrimarySubstationSpec>
  /** Multiplies the regional gusts (lake Garda's afternoon "Ora" wind makes Alto Garda windier). */
  readonly windiness: number
}

export type MemberRole = "prosumer" | "consumer" | "producer"

export interface ParticipantSpec {
  /** The identity provider's `sub`. */
  readonly sub: string
  readonly name: string
  readonly memberKey: string
  readonly role: MemberRole
  readonly since: string
  /** Peak power of the participant's PV plant (0 without one). */
  readonly pvKwp: number
  /** Yearly consumption (0 for a pure producer). */
  readonly annualConsumptionKwh: number
  /** Shape of the consumption over the day. */
  readonly loadProfile: "household" | "bakery"
  /** Share of the consumption that can be moved in time (washing, dishwasher, EV charging). */
  readonly flexibleShare: number
  /** Point of delivery code (Italian POD). */
  readonly pod: string
}

export interface CommunitySpec {
  readonly id: string
  readonly name: string
  readonly country: string
  /** The distribution network the members are connected to. */
  readonly networkId: string
  readonly participants: ReadonlyArray<ParticipantSpec>
}

export const networks: ReadonlyArray<NetworkSpec> = [
  {
    id: "dso-alto-garda",
    prefix: "AG",
    name: "Alto Garda Distribuzione (simulated)",
    windiness: 1.12,
    operationalUnits: [
      {
        name: "Zona Alto Garda",
        municipalities: [
          { name: "Riva del Garda", at: [10.8413, 45.8858], elevation: 73 },
          { name: "Arco", at: [10.8867, 45.9178], elevation: 91 },
          { name: "Nago-Torbole", at: [10.8826, 45.8766], elevation: 222 },
          { name: "Dro", at: [10.9120, 45.9620], elevation: 123 }
        ]
      },
      {
        name: "Zona Ledro e Tenno",
        municipalities: [
          { name: "Ledro", at: [10.7330, 45.8890], elevation: 660 },
          { name: "Tenno", at: [10.8320, 45.9180], elevation: 428 }
        ]
      }
    ],
    primarySubstations: [
      { code: "RIV", name: "CP Riva del Garda", municipality: "Riva del Garda", feeders: 5 },
      { code: "ARC", name: "CP Arco", municipality: "Arco", feeders: 4 },
      { code: "LED", name: "CP Ledro", municipality: "Ledro", feeders: 3 }
    ]
  },
  {
    id: "dso-valsugana",
    prefix: "VS",
    name: "Valsugana Reti (simulated)",
    windiness: 0.95,
    operationalUnits: [
      {
        name: "Zona Pergine-Levico",
        municipalities: [
          { name: "Pergine Valsugana", at: [11.2380, 46.0610], elevation: 482 },
          { name: "Levico Terme", at: [11.3020, 46.0120], elevation: 506 },
          { name: "Caldonazzo", at: [11.2640, 45.9950], elevation: 485 }
        ]
      },
      {
        name: "Zona Bassa Valsugana",
        municipalities: [
          { name: "Borgo Valsugana", at: [11.4560, 46.0520], elevation: 386 },
          { name: "Roncegno Terme", at: [11.4090, 46.0500], elevation: 535 }
        ]
      }
    ],
    primarySubstations: [
      { code: "PER", name: "CP Pergine", municipality: "Pergine Valsugana", feeders: 4 },
      { code: "LEV", name: "CP Levico", municipality: "Levico Terme", feeders: 4 },
      { code: "BOR", name: "CP Borgo Valsugana", municipality: "Borgo Valsugana", feeders: 4 }
    ]
  },
  {
    id: "dso-val-di-non",
    prefix: "VN",
    name: "Val di Non Energia (simulated)",
    windiness: 1.0,
    operationalUnits: [
      {
        name: "Zona Alta Val di Non",
        municipalities: [
          { name: "Cles", at: [11.0340, 46.3640], elevation: 658 },
          { name: "Borgo d'Anaunia", at: [11.1380, 46.4380], elevation: 988 }
        ]
      },
      {
        name: "Zona Bassa Val di Non",
        municipalities: [
          { name: "Predaia", at: [11.0850, 46.3160], elevation: 530 },
          { name: "Denno", at: [11.0480, 46.2730], elevation: 433 }
        ]
      }
    ],
    primarySubstations: [
      { code: "CLE", name: "CP Cles", municipality: "Cles", feeders: 5 },
      { code: "TAI", name: "CP Taio", municipality: "Predaia", feeders: 4 }
    ]
  }
]

export const community: CommunitySpec = {
  id: "it-energy-community",
  name: "Comunità Energetica Alto Garda (simulated)",
  country: "it",
  networkId: "dso-alto-garda",
  participants: [
    {
      sub: "52409e36-6d23-45ed-bb1e-d6c564a2f454",
      name: "Giulia Romano",
      memberKey: "member-giulia-romano",
      role: "prosumer",
      since: "2025-03-01",
      pvKwp: 6,
      annualConsumptionKwh: 3400,
      loadProfile: "household",
      flexibleShare: 0.25,
      pod: "IT001E81234501"
    },
    {
      sub: "cc28f729-6d12-46a8-bdfe-c8b6952a99e0",
      name: "Luca Greco",
      memberKey: "member-luca-greco",
      role: "consumer",
      since: "2025-05-15",
      pvKwp: 0,
      annualConsumptionKwh: 2700,
      loadProfile: "household",
      flexibleShare: 0.2,
      pod: "IT001E81234502"
    },
    {
      sub: "87d21057-69e9-40b6-bb1b-5fbf6d54c178",
      name: "Comune di Arco (municipal rooftops)",
      memberKey: "member-comune-arco",
      role: "producer",
      since: "2025-01-10",
      pvKwp: 45,
      annualConsumptionKwh: 0,
      loadProfile: "household",
      flexibleShare: 0,
      pod: "IT001E81234503"
    },
    {
      sub: "6804447f-fcf1-4475-a401-3585621a34b5",
      name: "Francesca Marino",
      memberKey: "member-francesca-marino",
      role: "prosumer",
      since: "2025-03-01",
      pvKwp: 4.5,
      annualConsumptionKwh: 4100,
      loadProfile: "household",
      flexibleShare: 0.3,
      pod: "IT001E81234504"
    },
    {
      sub: "4533d113-7a33-4dd7-ab68-4d209870d92f",
      name: "Panificio Bruni",
      memberKey: "member-panificio-bruni",
      role: "consumer",
      since: "2025-06-01",
      pvKwp: 0,
      annualConsumptionKwh: 14500,
      loadProfile: "bakery",
      flexibleShare: 0.15,
      pod: "IT001E81234505"
    },
    {
      sub: "8d60f007-719e-4807-ba59-7bfb0f97af04",
      name: "Stefano Rinaldi",
      memberKey: "member-stefano-rinaldi",
      role: "prosumer",
      since: "2025-09-01",
      pvKwp: 8,
      annualConsumptionKwh: 5200,
      loadProfile: "household",
      flexibleShare: 0.35,
      pod: "IT001E81234506"
    },
    {
      sub: "7613cb11-6199-4520-91f3-d8d833167260",
      name: "Chiara Esposito",
      memberKey: "member-chiara-esposito",
      role: "consumer",
      since: "2025-04-20",
      pvKwp: 0,
      annualConsumptionKwh: 2300,
      loadProfile: "household",
      flexibleShare: 0.2,
      pod: "IT001E81234507"
    }
  ]
}

export const communities: ReadonlyArray<CommunitySpec> = [community]

export const findNetwork = (id: string): NetworkSpec | undefined => networks.find((n) => n.id === id)
export const findCommunity = (id: string): CommunitySpec | undefined => communities.find((c) => c.id === id)
export const findParticipant = (sub: string): { readonly participant: ParticipantSpec; readonly community: CommunitySpec } | undefined => {
  for (const c of communities) {
    const participant = c.participants.find((p) => p.sub === sub)
    if (participant !== undefined) return { participant, community: c }
  }
  return undefined
}

/** The sensor id (the `device_id` of the meter fetchers) of a participant's meter. */
export const meterSensorId = (participant: ParticipantSpec): string => `${participant.memberKey}-meter`
