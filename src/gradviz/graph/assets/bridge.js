/* gradviz's viewer on the Streamlit page (st.components.v2): draws the viewer document in a
   frame, as st.iframe would, and passes a click on a node back to Python (the state value
   "selected": node id, title, program line and that line's text), so the page can mark the
   line in the program; and a layer closed or opened (the state value "folds"), so the server
   draws the graph again with those layers as single nodes. The viewer posts both to its
   parent; only messages from this component's own frame are taken. */
export default function (component) {
  const { data, setStateValue, parentElement } = component;
  let frame = parentElement.querySelector("iframe.gv-frame");
  if (!frame) {
    frame = document.createElement("iframe");
    frame.className = "gv-frame";
    frame.title = "gradviz graph viewer";
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-downloads allow-popups");
    frame.style.width = "100%";
    frame.style.border = "0";
    parentElement.appendChild(frame);
  }
  // The frame fits the window below where it starts on the page (at the page's top), less
  // data.below (the controls under it), between data.min_height and data.height: a 900 px
  // window shows it whole, and the walk-through's buttons under it, with the page unscrolled.
  // While hidden (another tab open) it has no place to measure: measured once shown.
  const fitHeight = () => {
    const box = parentElement.getBoundingClientRect();
    if (!box.width) { return; }
    let up = parentElement.parentElement;
    while (up && up !== document.body && !(up.scrollTop > 0)) { up = up.parentElement; }
    const top = box.top + (up && up !== document.body ? up.scrollTop : window.scrollY);
    const room = Math.floor(window.innerHeight - top - 12 - (data.below || 0));
    frame.style.height = Math.max(data.min_height || 0, Math.min(data.height, room)) + "px";
  };
  if (!frame.style.height) { frame.style.height = data.height + "px"; }
  fitHeight();
  const watch = window.ResizeObserver ? new ResizeObserver(fitHeight) : null;
  if (watch) { watch.observe(parentElement); }
  window.addEventListener("resize", fitHeight);
  if (frame.dataset.digest !== data.digest) {
    frame.dataset.digest = data.digest;
    frame.srcdoc = data.page;
  }
  const onMessage = (ev) => {
    const m = ev.data;
    if (ev.source !== frame.contentWindow || !m) { return; }
    if (m.type === "gradviz-fold") {  // close or open layers: the server draws them again
      const calls = Array.isArray(m.calls) ? m.calls.slice(0, 5000).map((c) => String(c).slice(0, 100)) : null;
      const depth = typeof m.depth === "string" ? m.depth.slice(0, 8) : null;
      setStateValue("folds", { calls: calls, depth: depth, at: Date.now() });
      return;
    }
    if (m.type !== "gradviz-select") { return; }
    const line = Number.isInteger(m.line) ? m.line : null;
    setStateValue("selected", {
      id: String(m.id).slice(0, 200),
      title: String(m.title).slice(0, 200),
      line: line,
      text: typeof m.text === "string" ? m.text.slice(0, 2000) : null,
    });
  };
  window.addEventListener("message", onMessage);
  return () => {
    window.removeEventListener("message", onMessage);
    window.removeEventListener("resize", fitHeight);
    if (watch) { watch.disconnect(); }
  };
}
