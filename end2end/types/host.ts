// A small TypeScript host of the widget: tsc checks it against the pickup.d.ts a running
// server serves (end2end/tests/types.spec.ts copies it in beside this file). The lines marked
// as expected errors are mistakes the types must catch.
import { mount, PickupRecent, type PickupErrorDetail, type MountedWidget } from "./pickup.js";

const el: PickupRecent = document.createElement("pickup-recent");
el.workspace = "acme";
el.server = "https://pickup.example.com";
el.cap = 5;
el.refresh = 30;
el.refresh();
el.filter = "mine";
el.token = "…";
el.getToken = async () => "a token";
el.labels = { title: "Zuletzt", mine: "Meine" };
el.addEventListener("pickup:open", (e) => {
  const url: string | null = e.detail.url;
  if (url?.startsWith("/")) e.preventDefault();
});
el.addEventListener("pickup:dismiss", (e) => console.log(e.detail.id));
el.addEventListener("pickup:error", (e) => {
  const detail: PickupErrorDetail = e.detail;
  console.warn(detail.code, detail.message);
});
document.body.addEventListener("pickup:error", (e) => console.warn(e.detail.message));

const widget: MountedWidget = mount(document.body, { workspace: "acme", getToken: () => "t", cap: 8, locale: "de" });
widget.refresh();
widget.unmount();

// @ts-expect-error: the filter is "all" or "mine"
el.filter = "everyone";
// @ts-expect-error: a label the widget does not have
el.labels = { titel: "x" };
// @ts-expect-error: getToken gives a token, not a number
el.getToken = () => 42;
// @ts-expect-error: the workspace is required
mount(document.body, { token: "t" });
// @ts-expect-error: an open event's detail has no title
el.addEventListener("pickup:open", (e) => e.detail.title);
