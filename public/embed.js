// The example host page's script (embed.html). Its URL may choose the Pickup server the widget
// calls and the token it sends, never where code comes from: the widget is loaded from beside it.
import { mount } from "./pickup.js";

const params = new URLSearchParams(location.hash.slice(1));
mount(document.getElementById("sidebar"), {
  workspace: params.get("ws") || "demo",
  token: params.get("token") || "",
  server: params.get("server") || location.origin,
  refresh: params.get("refresh") ?? undefined,
});
