/**
 * @rec/digital-twin: the contract of the digital-twin endpoints the platform consumes, a typed
 * client for it, and a simulator serving the same contract with deterministic data.
 */
export { CommunitiesGroup, DigitalTwinApi, GridGroup, ParticipantsGroup } from "./Api.js"
export {
  type CommunityOperations,
  DigitalTwinClient,
  DigitalTwinClientConfig,
  type DigitalTwinClientOptions,
  type DigitalTwinClientService,
  DigitalTwinError,
  type DigitalTwinOperations,
  type GridOperations,
  type MeterTotals,
  make as makeClient,
  type ParticipantOperations,
  type SharedTotals,
  toDigitalTwinError
} from "./Client.js"
export * as EnergySchemas from "./EnergySchemas.js"
export * as CompiledCheck from "./CompiledCheck.js"
export { UnknownFetcher } from "./Errors.js"
export * as GeoJson from "./GeoJson.js"
export * as GridSchemas from "./GridSchemas.js"
export * as SimulatorServer from "./simulator/Server.js"
export * as SimulatorSynthetic from "./simulator/Synthetic.js"
export { defaultSimulatorOptions, Simulator, type SimulatorOptions } from "./simulator/Simulator.js"
export * as SimulatorWorld from "./simulator/World.js"
export * as Values from "./Values.js"
