// A host page served from its own origin (another local port), as another app would embed Pickup.
import { createServer, Server } from "node:http";
import { AddressInfo } from "node:net";

export class HostPage {
  private html = "";
  private constructor(private readonly server: Server, readonly origin: string) {}

  static async start(): Promise<HostPage> {
    let self: HostPage | undefined;
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(self?.html ?? "");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    self = new HostPage(server, `http://127.0.0.1:${port}`);
    return self;
  }

  /** The page this host serves: one widget, configured by data attributes. */
  embed(pickupUrl: string, ws: string, token: string): void {
    this.html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head>
<body><h1>Host app</h1>
<aside style="width: 320px"><div data-pickup-workspace="${ws}" data-pickup-server="${pickupUrl}" data-pickup-token="${token}" data-pickup-refresh="60"></div></aside>
<script type="module" src="${pickupUrl}/pickup.js"></script></body></html>`;
  }

  /** Any page of the host's own. */
  serve(html: string): void {
    this.html = html;
  }

  async stop(): Promise<void> {
    await new Promise((r) => this.server.close(r));
  }
}
