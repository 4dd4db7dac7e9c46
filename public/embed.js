// The script of the example host page (embed.html). It loads the widget from beside itself only
// (./pickup.js): the page's URL may choose the Pickup server the widget calls and the token it
// sends, never where code comes from.
import { mount } from "./pickup.js";

const params = new URLSearchParams(location.hash.slice(1));
mount(document.getElementById("sidebar"), {
  workspace: params.get("ws") || "demo",
  token: params.get("token") || "",
  server: params.get("server") || location.origin,
  refresh: params.get("refresh") ?? undefined,
});
