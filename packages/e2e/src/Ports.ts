/** Free TCP ports of 127.0.0.1, chosen by the kernel (bound, read, released). */
import * as net from "node:net"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** `count` distinct free ports. */
export const freePorts = async (count: number): Promise<Array<number>> => {
  const ports = new Set<number>()
  while (ports.size < count) ports.add(await freePort())
  return [...ports]
}
