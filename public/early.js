// <pickup-recent>'s and mount()'s head start: the first page asked for, and drawn, before the
// wasm (drawing.js), whose download waits for it (loader.js), then the widget.
import { ATTRIBUTE } from "./contract.js";
import { ahead } from "./drawing.js";
import { before, load } from "./loader.js";

/** `mount(element, options)` for <pickup-recent> and pickup.js: once the wasm is in (a new
 *  data-pickup-token meanwhile is its token); `failed(message, cause)` says what fails. */
export function mount(element, options, failed) {
  let widget = null;
  let unmounted = false;
  const given = early(element, options, () => !unmounted && !widget);
  // Nor is a first page drawn, or left drawn, for a widget that will not come.
  const undo = () => {
    delete element.pickupPrefetch;
    element.querySelector(`:scope > [${ATTRIBUTE.drawn}]`)?.remove();
  };
  const mounted = load().then(
    (glue) => {
      if (unmounted) return;
      try {
        widget = glue.mount(element, { ...given, token: element.getAttribute(ATTRIBUTE.token) ?? given.token });
      } catch (e) {
        failed(typeof e === "string" ? e : "the widget could not start", e);
      }
    },
    (e) => {
      undo();
      failed("the widget's code could not be loaded", e);
    },
  );
  return {
    unmount() {
      unmounted = true;
      if (!widget) undo();
      widget?.unmount();
      widget = null;
    },
    refresh: () => void mounted.then(() => widget?.refresh()),
  };
}

/** Asks ahead for `options`' first page, the wasm waiting until it is drawn; with `getToken` and
 *  no `token`, with getToken's answer (while `wanted()`), which the returned getToken gives first. */
function early(box, options, wanted) {
  const { token, getToken } = options;
  const asks = !token && typeof getToken === "function";
  const first = asks ? (async () => getToken())() : Promise.resolve(token);
  before(first.then((token) => wanted() && ahead(box, { ...options, token })?.drawn, () => {}));
  if (!asks) return options;
  let given = false;
  return {
    ...options,
    getToken: () => {
      if (given) return getToken();
      given = true;
      return first;
    },
  };
}
