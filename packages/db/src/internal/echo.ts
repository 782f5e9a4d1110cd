/**
 * `DATABASE_ECHO`: a node-postgres `Client` subclass that reports the text of every statement
 * before sending it. Parameters are never logged (they may hold personal data or secrets).
 */
import * as Pg from "pg"

type ClientClass = new (config?: string | Pg.ClientConfig) => Pg.Client

export const withEcho = (Base: ClientClass, log: (statement: string) => void): ClientClass =>
  class EchoClient extends Base {
    // `query` has a dozen overloads; this override only reads the statement text and forwards
    // the arguments untouched, so it is typed loosely on purpose.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override query(...args: Array<any>): any {
      const first: unknown = args[0]
      const text =
        typeof first === "string"
          ? first
          : typeof first === "object" && first !== null && "text" in first && typeof first.text === "string"
            ? first.text
            : undefined
      if (text !== undefined) log(text)
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return (super.query as (...a: Array<any>) => unknown)(...args)
    }
  }
