// A React 19 host app (built by Vite in end2end/tests/frameworks.spec.ts): a dashboard route
// with <pickup-recent>, a settings route without it. No JSX, so no React plugin: createElement.
// Its backend (the spec's server) mints the viewer's tokens at /token; the Pickup server's
// origin comes in the query, as a deployment's configuration would.
import { createElement as h, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";

const server = new URLSearchParams(location.search).get("pickup");
await import(/* @vite-ignore */ `${server}/pickup.js`);
window.opened = [];
window.tokens = 0;
const getToken = async () => {
  window.tokens++;
  return (await fetch("/token")).text();
};

function Dashboard() {
  return h("pickup-recent", {
    workspace: "acme",
    server,
    cap: 5,
    refresh: 60,
    getToken,
    labels: { title: "Recent in acme" },
    "onpickup:open": (e) => {
      e.preventDefault();
      window.opened.push(e.detail);
    },
  });
}

function App() {
  const [route, setRoute] = useState(location.pathname);
  useEffect(() => {
    const back = () => setRoute(location.pathname);
    addEventListener("popstate", back);
    return () => removeEventListener("popstate", back);
  }, []);
  const go = (path) => () => {
    history.pushState(null, "", path + location.search);
    setRoute(path);
  };
  return h(
    "main",
    null,
    h("nav", null, h("button", { onClick: go("/") }, "Dashboard"), h("button", { onClick: go("/settings") }, "Settings")),
    route === "/settings" ? h("h1", null, "Settings") : h(Dashboard),
  );
}

createRoot(document.getElementById("app")).render(h(App));
