import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of PostgreSQL or Redis, so a fault test can cut a
 * client's connections and refuse new ones for a while, as a network partition would,
 * without touching the server other suites share.
 */
export interface TcpProxy {
  port: number;
  /** Destroys every open connection through the proxy. */
  cut(): void;
  /** Stops accepting (connections are refused) until `open()`. */
  refuse(): Promise<void>;
  open(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let port = 0;
  let server: net.Server | null = null;

  function listen(): Promise<void> {
    const s = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      for (const sock of [client, upstream]) {
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
        sock.on('error', () => undefined);
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    server = s;
    return new Promise((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  function cut(): void {
    for (const s of sockets) s.destroy();
  }

  function stop(): Promise<void> {
    const s = server;
    server = null;
    cut();
    return s ? new Promise((resolve) => s.close(() => resolve())) : Promise.resolve();
  }

  await listen();
  return {
    get port() {
      return port;
    },
    cut,
    refuse: stop,
    open: listen,
    close: stop,
  };
}

/** The URL with its host and port replaced by the proxy's. */
export function viaProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}
