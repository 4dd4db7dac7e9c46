// A Vue 3 host app (built by Vite in end2end/tests/frameworks.spec.ts): a dashboard route with
// <pickup-recent>, a settings route without it. Render functions, so no Vue plugin or template
// compiler. Its backend (the spec's server) mints the viewer's tokens at /token; the Pickup
// server's origin comes in the query, as a deployment's configuration would.
import { createApp, defineComponent, h, ref, onMounted, onUnmounted } from "vue";

const server = new URLSearchParams(location.search).get("pickup");
await import(/* @vite-ignore */ `${server}/pickup.js`);
window.opened = [];
window.tokens = 0;
const getToken = async () => {
  window.tokens++;
  return (await fetch("/token")).text();
};

const Dashboard = () =>
  h("pickup-recent", {
    workspace: "acme",
    server,
    cap: 5,
    refresh: 60,
    getToken,
    labels: { title: "Recent in acme" },
    "onPickup:open": (e) => {
      e.preventDefault();
      window.opened.push(e.detail);
    },
  });

const App = defineComponent(() => {
  const route = ref(location.pathname);
  const back = () => (route.value = location.pathname);
  onMounted(() => addEventListener("popstate", back));
  onUnmounted(() => removeEventListener("popstate", back));
  const go = (path) => () => {
    history.pushState(null, "", path + location.search);
    route.value = path;
  };
  return () =>
    h("main", [
      h("nav", [h("button", { onClick: go("/") }, "Dashboard"), h("button", { onClick: go("/settings") }, "Settings")]),
      route.value === "/settings" ? h("h1", "Settings") : h(Dashboard),
    ]);
});

createApp(App).mount("#app");
