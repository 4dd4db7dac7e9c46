// Types for pickup.js and pickup-element.js, served beside them (README.md, "Embedding").
// end2end/types/ checks them with tsc against a small TypeScript host.

/** Every word the widget shows; a label left out stays English. `{title}` / `{titles}` stand
 *  for the card's title / the new cards' titles. */
export interface PickupLabels {
  title?: string; mine?: string; everyone?: string; whose_items?: string; refresh?: string;
  list?: string; loading?: string; empty?: string; forbidden?: string; unauthenticated?: string;
  load_failed?: string; try_again?: string; stale?: string; show_older?: string;
  older_failed?: string; partial?: string; new_items?: string; dismiss?: string; progress?: string;
  queued?: string; running?: string; succeeded?: string; failed?: string; cancelled?: string;
  stalled?: string; unknown?: string;
}

/** Returns a token (a JWT for the viewer), or a promise of one. */
export type GetToken = () => string | Promise<string>;

export type PickupFilter = "all" | "mine";

/** `mount()`'s options; the element's attributes and properties are the same names. */
export interface MountOptions {
  workspace: string;
  /** Default: this page's origin. */
  server?: string;
  /** A token, a getToken, or both. */
  token?: string;
  getToken?: GetToken;
  /** Cards on the first page, 1..50 (default 8). */
  cap?: number | string;
  /** Seconds between polls when the stream is not live, 1..86400 (default 15). */
  refresh?: number | string;
  /** A BCP 47 tag for relative times (default: the browser's). */
  locale?: string;
  /** Whose items the widget shows first (default "all"). */
  filter?: PickupFilter;
  labels?: PickupLabels;
}

export interface MountedWidget {
  /** Removes the widget and stops its stream, timers and token renewal. */
  unmount(): void;
  /** Asks the server for the cards now. */
  refresh(): void;
}

export function mount(element: HTMLElement, options: MountOptions): MountedWidget;

export interface PickupOpenDetail { id: string; key: string; url: string | null }
export interface PickupDismissDetail { id: string }
export interface PickupErrorDetail {
  /** As in the API's errors: "unauthenticated", "forbidden", "store_unavailable", "transport", … */
  code: string;
  message: string;
}

export interface PickupEventMap {
  /** Cancelable: preventDefault() keeps the browser from following the card's link. */
  "pickup:open": CustomEvent<PickupOpenDetail>;
  "pickup:dismiss": CustomEvent<PickupDismissDetail>;
  "pickup:error": CustomEvent<PickupErrorDetail>;
}

/** `<pickup-recent>`: attributes workspace, server, cap, refresh, locale, filter; the same as
 *  properties, plus token, getToken and labels. */
export declare class PickupRecent extends HTMLElement {
  static readonly observedAttributes: string[];
  workspace: string | null;
  server: string | null;
  cap: string | number | null;
  locale: string | null;
  filter: PickupFilter | null;
  token: string;
  getToken: GetToken | null;
  labels: PickupLabels | null;
  /** `el.refresh()` asks the server for the cards now; `el.refresh = 30` sets the `refresh`
   *  attribute (seconds between polls when not live), as React and Vue set it. */
  get refresh(): () => void;
  set refresh(seconds: string | number | null);
  addEventListener<K extends keyof PickupEventMap>(type: K, listener: (this: PickupRecent, ev: PickupEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener<K extends keyof HTMLElementEventMap>(type: K, listener: (this: PickupRecent, ev: HTMLElementEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof PickupEventMap>(type: K, listener: (this: PickupRecent, ev: PickupEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

/** The element's attributes and properties as JSX and templates set them. */
export interface PickupRecentProps {
  workspace: string;
  server?: string;
  cap?: number | string;
  refresh?: number | string;
  locale?: string;
  filter?: PickupFilter;
  token?: string;
  getToken?: GetToken;
  labels?: PickupLabels;
}

declare global {
  interface HTMLElementTagNameMap {
    "pickup-recent": PickupRecent;
  }
  interface HTMLElementEventMap extends PickupEventMap {}
}

// React 19 (`react` and the automatic runtime's `react/jsx-runtime`): <pickup-recent> in JSX,
// its properties, and its events as `onpickup:open` (React 19 listens to custom events by name).
type PickupJsx = PickupRecentProps & {
  ref?: unknown; key?: string | number; id?: string; class?: string; className?: string;
  style?: unknown; slot?: string; hidden?: boolean;
  "onpickup:open"?: (e: CustomEvent<PickupOpenDetail>) => void;
  "onpickup:dismiss"?: (e: CustomEvent<PickupDismissDetail>) => void;
  "onpickup:error"?: (e: CustomEvent<PickupErrorDetail>) => void;
};
declare module "react" {
  namespace JSX {
    interface IntrinsicElements {
      "pickup-recent": PickupJsx;
    }
  }
}

// Vue 3: <pickup-recent> in templates, typed (with compilerOptions.isCustomElement for it).
declare module "vue" {
  interface GlobalComponents {
    "pickup-recent": new () => { $props: PickupRecentProps & Record<string, unknown> };
  }
}
