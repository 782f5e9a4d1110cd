/** Waiting for something a peer received, with a message saying what arrived instead. */
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const waitUntil = async <A>(
  what: string,
  probe: () => A | undefined | Promise<A | undefined>,
  options: { readonly timeoutMs?: number; readonly intervalMs?: number; readonly describe?: () => string } = {}
): Promise<A> => {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  let lastError: unknown
  while (Date.now() < deadline) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (error) {
      lastError = error
    }
    await sleep(options.intervalMs ?? 200)
  }
  const cause = lastError instanceof Error ? `; last error: ${lastError.message}` : ""
  throw new Error(`timed out waiting for ${what}${options.describe ? ` (${options.describe()})` : ""}${cause}`)
}
