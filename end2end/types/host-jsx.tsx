// The element in a React 19 host's JSX: its props and its events, typed by pickup.d.ts.
import "./pickup.js";

export const Sidebar = ({ token }: { token: () => Promise<string> }) => (
  <aside>
    <pickup-recent workspace="acme" server="https://pickup.example.com" cap={5} getToken={token} onpickup:open={(e) => console.log(e.detail.url)} />
    {/* @ts-expect-error: the workspace is required */}
    <pickup-recent server="https://pickup.example.com" />
    {/* @ts-expect-error: labels are words */}
    <pickup-recent workspace="acme" labels={{ title: 1 }} />
  </aside>
);
