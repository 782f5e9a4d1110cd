// http_ece ships no types; the part the tests use.
declare module "http_ece" {
  import type { ECDH } from "node:crypto"
  export interface DecryptParams {
    readonly version: "aes128gcm" | "aesgcm" | "aesgcm128"
    readonly privateKey?: ECDH
    readonly authSecret?: string | Buffer
    readonly dh?: string | Buffer
    readonly keyid?: string | Buffer
  }
  export function decrypt(buffer: Buffer, params: DecryptParams): Buffer
  const ece: { decrypt: typeof decrypt }
  export default ece
}
