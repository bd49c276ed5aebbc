/* gradviz's graph viewer: pan and zoom (svg-pan-zoom), hover summaries, a click inspector with
   the path to the output, search, collapsible layer clusters, colour by role, device or
   gradient, and a quiz mode. Reads its data from the JSON island #gv-data; no network. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("gv-data").textContent);
  var svg = document.querySelector("#gv-graph svg");
  var $ = function (id) { return document.getElementById(id); };
  var params = new URLSearchParams(window.location.search);
  var quiz = { on: !!data.quiz || params.get("quiz") === "1" || /quiz/.test(window.location.hash),
               values: params.get("quiz_values") === "1" || !!data.quiz_values, answered: {} };

  // ------------------------------------------------------------------ pan and zoom
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  svg.style.width = "100%";
  svg.style.height = "100%";
  // Pan and zoom start once the drawing's area has a size: a frame made while hidden (the
  // page's Graph tab closed) measures 0 x 0, and a view fitted to that is a zero matrix that
  // no zoom or fit brings back.
  var pz = null;
  // fitted: the view is the fitted one, not moved since (a frame resized then fits again)
  var fitted = false, fitting = false;
  function moved() { if (!fitting) { fitted = false; } }
  function startPanZoom() {
    pz = svgPanZoom(svg, {
      zoomEnabled: true, panEnabled: true, controlIconsEnabled: false, fit: true, center: true,
      minZoom: 0.02, maxZoom: 80, zoomScaleSensitivity: 0.25, dblClickZoomEnabled: false,
      preventMouseEventsDefault: true,
      onZoom: function () { moved(); detail(); saveView(); },
      onPan: function () { moved(); saveView(); }
    });
    window.gvPanZoom = pz;
  }
  function whenShown(go) {
    var area = $("gv-graph"), started = false;
    function sized() { return area.clientWidth > 0 && area.clientHeight > 0; }
    function tryStart() {
      if (started || !sized()) { return; }
      started = true;
      if (watch) { watch.disconnect(); }
      window.removeEventListener("resize", tryStart);
      go();
    }
    var watch = window.ResizeObserver ? new ResizeObserver(tryStart) : null;
    if (watch) { watch.observe(area); }
    window.addEventListener("resize", tryStart);
    tryStart();
  }
  // On the page the view (zoom, pan, colour by) outlives a rerun: kept in this tab's storage.
  var store = null;
  if (data.remember) {
    try { store = window.sessionStorage; store.getItem("gradviz-view"); } catch (e) { store = null; }
  }
  // A rerun lays the graph out again (a line added moves the drawing in its frame), so the
  // view also keeps an anchor: the tensor nearest the frame's centre and where it was on the
  // screen. Restored, the same tensor (same id and label, else the same label) is put back on
  // that spot at the same real zoom; the nodes around it move only as far as the new layout
  // moved them relative to it.
  var saving = null;
  function saveView() {
    if (!store || !pz || !document.body.dataset.gvReady) { return; }
    if (saving) { clearTimeout(saving); }
    saving = setTimeout(writeView, 120);
  }
  window.addEventListener("pagehide", function () { if (saving) { clearTimeout(saving); writeView(); } });
  function writeView() {
    saving = null;
    try {
      store.setItem("gradviz-view", JSON.stringify({ zoom: pz.getZoom(), real: pz.getSizes().realZoom,
        pan: pz.getPan(), colour: $("gv-colour").value, anchor: anchorNow(), shape: data.shape,
        titles: titleCounts(), fitted: fitted }));
    } catch (e) { store = null; }
  }
  // Where a node's centre is drawn in the frame, from svg-pan-zoom's own zoom and pan (the
  // transform it writes to the page lags a frame behind, so the DOM's boxes are not read).
  function screenAt(g) {
    var vp = svg.querySelector(".svg-pan-zoom_viewport"), b = g.getBBox();
    var m = vp.getCTM().inverse().multiply(g.getCTM()), p = svg.createSVGPoint();
    p.x = b.x + b.width / 2; p.y = b.y + b.height / 2;
    p = p.matrixTransform(m);
    var z = pz.getSizes().realZoom, pan = pz.getPan();
    return { x: pan.x + z * p.x, y: pan.y + z * p.y };
  }
  function anchorNow() {
    var box = pz.getSizes(), best = null, bestD = Infinity;
    Object.keys(nodeEls).forEach(function (id) {
      var n = nodes[id], g = nodeEls[id];
      if (!n || n.kind !== "tensor" || g.style.display === "none") { return; }
      var p = screenAt(g), d = Math.hypot(p.x - box.width / 2, p.y - box.height / 2);
      if (d < bestD) { bestD = d; best = { id: id, title: n.title, x: p.x, y: p.y }; }
    });
    return best;
  }
  function anchorEl(a) {
    if (nodes[a.id] && nodes[a.id].title === a.title && nodeEls[a.id]) { return nodeEls[a.id]; }
    var same = Object.keys(nodeEls).filter(function (id) { return nodes[id] && nodes[id].kind === "tensor" && nodes[id].title === a.title; });
    return same.length === 1 ? nodeEls[same[0]] : null;
  }
  // How many nodes carry each title: what a rerun's graph shares with the one before.
  function titleCounts() {
    var c = {};
    Object.keys(nodes).forEach(function (id) { var t = nodes[id].title; c[t] = (c[t] || 0) + 1; });
    return c;
  }
  function shared(before) {
    var now = titleCounts(), common = 0, a = 0, b = 0;
    Object.keys(now).forEach(function (t) { a += now[t]; common += Math.min(now[t], before[t] || 0); });
    Object.keys(before).forEach(function (t) { b += before[t]; });
    return common / Math.max(a, b, 1);
  }
  // The view kept from the last run: as it was for the same graph (same nodes and edges: a
  // rerun, a walk-through step), anchored on a tensor for a small edit of it (most nodes
  // shared); a new graph opens fitted to its own size instead (false).
  function restoreView() {
    var kept = null;
    try { kept = store && JSON.parse(store.getItem("gradviz-view") || "null"); } catch (e) { kept = null; }
    if (!kept) { return false; }
    if (kept.colour && kept.colour !== "role") { $("gv-colour").value = kept.colour; recolour(kept.colour); }
    if (kept.fitted || !(kept.real > 0) || !kept.pan) { return false; }  // fitted again, to this frame
    var base = pz.getSizes().realZoom / pz.getZoom();
    if (kept.shape && kept.shape === data.shape) {
      pz.zoom(kept.real / base);
      pz.pan(kept.pan);
      return true;
    }
    if (!kept.titles || shared(kept.titles) < data.keep_share) { return false; }
    var g = kept.anchor ? anchorEl(kept.anchor) : null;
    if (!g) { return false; }
    pz.zoom(kept.real / base);
    var p = screenAt(g);
    pz.panBy({ x: kept.anchor.x - p.x, y: kept.anchor.y - p.y });
    return true;
  }
  // Fit the graph to the frame, but not below data.min_text_px of node text: a wide graph is
  // then shown from its top, centred, to pan across rather than shrunk past reading.
  function textSize() {
    var sizes = [];
    svg.querySelectorAll("g.node text").forEach(function (t) {
      var f = parseFloat(t.getAttribute("font-size"));
      if (f > 0) { sizes.push(f); }
    });
    sizes.sort(function (a, b) { return a - b; });
    return sizes.length ? sizes[Math.floor(sizes.length / 2)] : 14;
  }
  function fitView() {
    fitting = true;
    try {
      pz.resize(); pz.fit(); pz.center();
      var z = pz.getSizes().realZoom, want = (data.min_text_px || 0) / textSize();
      if (z > 0 && z < want) {
        pz.zoom(pz.getZoom() * want / z);
        var s = pz.getSizes(), b = svg.querySelector(".svg-pan-zoom_viewport").getBBox(), r = s.realZoom;
        var h = b.height * r;
        pz.pan({ x: (s.width - b.width * r) / 2 - r * b.x,
                 y: (h > s.height ? 6 : (s.height - h) / 2) - r * b.y });
      }
    } finally { fitting = false; }
    fitted = true;
    saveView();
  }
  // A node the page points at (the walk-through's step), centred if the view leaves it out.
  function inView(id) {
    var g = id ? nodeEls[id] : null;
    if (!g || g.style.display === "none") { return; }
    var p = screenAt(g), s = pz.getSizes(), m = 30;
    if (p.x < m || p.x > s.width - m || p.y < m || p.y > s.height - m) {
      pz.panBy({ x: s.width / 2 - p.x, y: s.height / 2 - p.y });
    }
  }
  // Level of detail: text smaller than a few pixels on screen is not drawn (it cannot be read,
  // and painting thousands of glyphs is most of a big graph's frame time).
  function detail() {
    var zoom = pz ? pz.getSizes().realZoom : 1;
    document.body.classList.toggle("gv-lod", zoom < data.lod_zoom);
  }
  $("gv-zoom-in").onclick = function () { if (pz) { pz.zoomIn(); } };
  $("gv-zoom-out").onclick = function () { if (pz) { pz.zoomOut(); } };
  $("gv-fit").onclick = function () { if (pz) { fitView(); detail(); } };
  $("gv-reset").onclick = function () { if (pz) { fitView(); detail(); } };
  window.addEventListener("resize", function () { if (pz && fitted) { fitView(); detail(); } else if (pz) { pz.resize(); } });

  // Two-finger pinch on a touch screen zooms about the fingers' midpoint (a trackpad's pinch
  // arrives as a wheel event, which svg-pan-zoom already zooms with).
  var pinch = null;
  function spread(ts) { return Math.hypot(ts[0].clientX - ts[1].clientX, ts[0].clientY - ts[1].clientY); }
  function middle(ts) {
    var box = svg.getBoundingClientRect();
    return { x: (ts[0].clientX + ts[1].clientX) / 2 - box.left, y: (ts[0].clientY + ts[1].clientY) / 2 - box.top };
  }
  svg.addEventListener("touchstart", function (ev) {
    if (pz && ev.touches.length === 2) { pinch = spread(ev.touches); pz.disablePan(); ev.preventDefault(); }
  }, { passive: false });
  svg.addEventListener("touchmove", function (ev) {
    if (pz && pinch && ev.touches.length === 2) {
      var d = spread(ev.touches);
      if (pinch > 0 && d > 0) { pz.zoomAtPoint(pz.getZoom() * d / pinch, middle(ev.touches)); }
      pinch = d;
      ev.preventDefault();
    }
  }, { passive: false });
  svg.addEventListener("touchend", function (ev) {
    if (pinch && ev.touches.length < 2) { pinch = null; pz.enablePan(); }
  });

  // ------------------------------------------------------------------ the drawing's parts
  var nodes = data.nodes, nodeEls = {}, edgeEls = [], clusterEls = {}, out = {};
  svg.querySelectorAll("g.node").forEach(function (g) {
    var id = g.querySelector("title").textContent;
    nodeEls[id] = g;
    g.querySelectorAll("a").forEach(function (a) { a.removeAttribute("xlink:title"); a.removeAttribute("title"); });
  });
  svg.querySelectorAll("g.edge").forEach(function (g) {
    var ends = g.querySelector("title").textContent.split("->");
    edgeEls.push({ g: g, s: ends[0], d: ends[1] });
  });
  svg.querySelectorAll("g.cluster").forEach(function (g) {
    var t = g.querySelector("title").textContent;
    if (t.indexOf("cluster_") === 0 && data.modules[t.slice(8)]) { clusterEls[t.slice(8)] = g; }
  });
  data.edges.forEach(function (e) { (out[e[0]] = out[e[0]] || []).push(e[1]); });

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function num(x) {
    if (typeof x !== "number") { return String(x); }
    if (x === 0) { return "0"; }
    var a = Math.abs(x);
    return (a >= 1e4 || a < 1e-3) ? x.toExponential(3) : x.toFixed(4).replace(/0+$/, "").replace(/\.$/, "");
  }
  function stats(s) {
    if (!s) { return "—"; }
    return "min " + num(s.min) + " · max " + num(s.max) + " · mean " + num(s.mean) + " · norm " + num(s.norm);
  }
  function showGrad(t) { return !(quiz.on && !quiz.answered[t.id]); }
  function showValue(t) { return !(quiz.on && quiz.values && !quiz.answered[t.id]); }

  // ------------------------------------------------------------------ hover
  var tip = $("gv-tip");
  function tipHtml(n) {
    var h = "<b>" + esc(n.title) + "</b>", t = n.t;
    if (t) {
      h += "<div>line " + esc(t.line) + ": <code>" + esc(t.expr || t.name) + "</code></div>";
      h += "<div>shape (" + esc(t.shape.join(", ")) + ") · " + esc(t.dtype) + " · " + esc(t.device) + "</div>";
      h += "<div>value: " + (showValue(t) ? esc(stats(t.vstats) === "—" ? t.preview : stats(t.vstats)) : "hidden (quiz)") + "</div>";
      var g = t.gstats ? stats(t.gstats) : (t.grad_preview || "none");
      h += "<div class='gv-grad'>grad: " + (showGrad(t) ? esc(g) : "hidden (quiz)") + "</div>";
      if (t.grad_fn) { h += "<div>grad_fn: " + esc(t.grad_fn) + "</div>"; }
      if (t.note) { h += "<div>" + esc(t.note) + "</div>"; }
    } else if (n.kind === "function") {
      h += "<div>backward function</div>";
    }
    if (n.rule) { h += "<div class='gv-rule'>" + esc(n.rule) + "</div>"; }
    if (n.device) { h += "<div>device: " + esc(n.device) + "</div>"; }
    return h;
  }
  Object.keys(nodeEls).forEach(function (id) {
    var g = nodeEls[id], n = nodes[id];
    if (!n) { return; }
    g.addEventListener("mouseenter", function () { tip.innerHTML = tipHtml(n); tip.style.display = "block"; });
    g.addEventListener("mousemove", function (ev) {
      tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 4) + "px";
      tip.style.top = Math.min(ev.clientY + 14, window.innerHeight - tip.offsetHeight - 4) + "px";
    });
    g.addEventListener("mouseleave", function () { tip.style.display = "none"; });
    g.addEventListener("click", function (ev) { ev.stopPropagation(); if (!unfold(id)) { select(id); } });
  });

  // ------------------------------------------------------------------ click: path + inspector
  function pathFrom(id) {
    var seen = {}, stack = [id];
    seen[id] = true;
    while (stack.length) {
      var k = stack.pop();
      (out[k] || []).forEach(function (d) { if (!seen[d]) { seen[d] = true; stack.push(d); } });
    }
    return seen;
  }
  function clearPath() {
    svg.querySelectorAll(".gv-on-path,.gv-selected,.gv-dim").forEach(function (g) {
      g.classList.remove("gv-on-path", "gv-selected", "gv-dim");
    });
  }
  function select(id) {
    clearPath();
    var on = pathFrom(id);
    Object.keys(nodeEls).forEach(function (k) {
      if (!nodes[k]) { return; }
      nodeEls[k].classList.add(on[k] ? "gv-on-path" : "gv-dim");
    });
    edgeEls.forEach(function (e) { e.g.classList.add(on[e.s] && on[e.d] ? "gv-on-path" : "gv-dim"); });
    nodeEls[id].classList.add("gv-selected");
    inspect(id);
    tellPage(id);
  }
  // On the page the viewer sits in a frame: the clicked node's program line goes to the page,
  // which marks it in the program beside the graph (gradviz.ui.graph_viewer). A function's
  // line is that of the tensor it made.
  function lineOf(id) {
    var n = nodes[id];
    if (n && n.t && n.t.line) { return n.t; }
    var made = (out[id] || []).map(function (d) { return nodes[d]; }).filter(function (m) { return m && m.t && m.t.line; });
    return made.length ? made[0].t : null;
  }
  function tellPage(id) {
    if (!data.remember || window.parent === window) { return; }
    var t = lineOf(id), lines = String(data.source || "").split("\n");
    var msg = { type: "gradviz-select", id: id, title: nodes[id] ? nodes[id].title : id,
      line: t ? t.line : null, text: t && t.line <= lines.length ? lines[t.line - 1] : null };
    try { window.parent.postMessage(msg, "*"); } catch (e) { /* no page to tell */ }
  }
  function flat(v, acc) {
    if (Array.isArray(v)) { v.forEach(function (x) { flat(x, acc); }); } else if (typeof v === "number") { acc.push(v); }
    return acc;
  }
  function colour(x, m) { // diverging blue (negative) - white - orange (positive), Okabe-Ito ends
    var f = m > 0 ? Math.max(-1, Math.min(1, x / m)) : 0, a = Math.abs(f);
    var end = f < 0 ? [0, 114, 178] : [230, 159, 0];
    return "rgb(" + end.map(function (c) { return Math.round(255 + (c - 255) * a); }).join(",") + ")";
  }
  function tensorView(v, label) {
    if (v === null || v === undefined) { return "<div>" + esc(label) + ": not kept (too many values)</div>"; }
    if (typeof v === "number") { return "<div>" + esc(label) + ": <b>" + esc(num(v)) + "</b></div>"; }
    var rows = Array.isArray(v[0]) ? v : [v], cols = rows[0] ? rows[0].length : 0;
    var all = flat(v, []), m = Math.max.apply(null, all.map(Math.abs).concat([0]));
    if (!Array.isArray(rows[0][0]) && rows.length <= 64 && cols <= 64) {
      var small = rows.length * cols <= 144, h = "<div>" + esc(label) + "</div><table class='gv-heat'>";
      rows.forEach(function (r) {
        h += "<tr>" + r.map(function (x) {
          return "<td title='" + esc(num(x)) + "' style='background:" + colour(x, m) + "'>" + (small ? esc(num(x)) : "") + "</td>";
        }).join("") + "</tr>";
      });
      return h + "</table>";
    }
    return "<div>" + esc(label) + " (" + all.length + " numbers)</div>" + histogram(all);
  }
  function histogram(all) {
    var lo = Math.min.apply(null, all), hi = Math.max.apply(null, all), bins = new Array(24).fill(0);
    all.forEach(function (x) { bins[hi > lo ? Math.min(23, Math.floor((x - lo) / (hi - lo) * 24)) : 0] += 1; });
    var top = Math.max.apply(null, bins), h = "<svg class='gv-hist' viewBox='0 0 240 80'>";
    bins.forEach(function (b, i) {
      var y = 70 * b / top;
      h += "<rect x='" + i * 10 + "' y='" + (70 - y) + "' width='9' height='" + y + "'><title>" + b + "</title></rect>";
    });
    return h + "<text x='0' y='79'>" + esc(num(lo)) + "</text><text x='240' y='79' text-anchor='end'>" + esc(num(hi)) + "</text></svg>";
  }
  function codeView(line) {
    var lines = data.source ? data.source.split("\n") : [];
    if (!lines.length) { return ""; }
    return "<pre class='gv-code'>" + lines.map(function (l, i) {
      return "<span class='" + (i + 1 === line ? "gv-line gv-line-hl" : "gv-line") + "'>" + esc(String(i + 1).padStart(3) + "  " + l) + "</span>";
    }).join("\n") + "</pre>";
  }
  function inspect(id) {
    var n = nodes[id], t = n.t, box = $("gv-inspector"), h = "<h3>" + esc(n.title) + "</h3>";
    if (box.style.display !== "block") {  // the drawing's frame narrows: keep its middle in the middle
      var wide = svg.getBoundingClientRect().width;
      box.style.display = "block";
      pz.resize();
      pz.panBy({ x: (svg.getBoundingClientRect().width - wide) / 2, y: 0 });
    }
    if (!t) {
      h += "<div>" + esc(n.kind === "function" ? "backward function" : n.role) + "</div>";
      if (n.rule) { h += "<div class='gv-rule'>" + esc(n.rule) + "</div>"; }
      (n.saved || []).forEach(function (s) { h += "<div>saved " + esc(s[0]) + ": " + esc(s[1]) + "</div>"; });
      box.innerHTML = h;
      return;
    }
    h += "<div>shape (" + esc(t.shape.join(", ")) + ") · " + esc(t.dtype) + " · " + esc(t.device) + "</div>";
    h += showValue(t) ? "<div>value: " + esc(stats(t.vstats)) + "</div>" + tensorView(t.value, "value") : "<div>value hidden (quiz)</div>";
    if (quiz.on && !quiz.answered[t.id] && t.grad !== null && t.grad !== undefined) {
      h += "<div class='gv-quiz'><label>Your gradient for " + esc(t.label) + ".grad: <input id='gv-answer' placeholder='e.g. 2, 2.67, 3.33'></label>" +
        " <button id='gv-check'>Check</button> <span id='gv-verdict'></span></div>";
    } else if (t.grad !== null && t.grad !== undefined) {
      h += "<div class='gv-grad'>grad: " + esc(stats(t.gstats)) + "</div>" + tensorView(t.grad, "grad");
    } else {
      h += "<div class='gv-grad'>grad: " + esc(t.grad_preview || "none yet") + "</div>";
    }
    h += codeView(t.line);
    box.innerHTML = h;
    var hl = box.querySelector(".gv-line-hl");
    if (hl) { hl.scrollIntoView({ block: "nearest" }); }
    if ($("gv-check")) {
      $("gv-check").onclick = function () { check(t, id); };
      $("gv-answer").onkeydown = function (ev) { if (ev.key === "Enter") { check(t, id); } };
    }
  }

  // ------------------------------------------------------------------ quiz
  function check(t, id) {
    var want = flat(t.grad, []), got = ($("gv-answer").value.match(/[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/gi) || []).map(Number);
    var right = got.length === want.length && want.every(function (w, i) {
      return Math.abs(got[i] - w) <= data.quiz_atol + data.quiz_rtol * Math.abs(w);
    });
    var verdict = $("gv-verdict");
    verdict.className = right ? "gv-right" : "gv-wrong";
    verdict.textContent = right ? "Right!" : (got.length !== want.length
      ? "Not quite: " + t.label + ".grad has " + want.length + " number" + (want.length === 1 ? "" : "s") + ", you gave " + got.length + "."
      : "Not quite: look at the rule of each backward function on the path from " + t.label + " to the output.");
    var reveal = document.createElement("button");
    reveal.textContent = "Reveal";
    reveal.id = "gv-reveal";
    reveal.onclick = function () { quiz.answered[t.id] = true; applyQuiz(); inspect(id); };
    if (!$("gv-reveal") && !data.quiz) { verdict.parentNode.appendChild(reveal); }  // a quiz link: the page reveals
    if (right) { quiz.answered[t.id] = true; applyQuiz(); }
  }
  function applyQuiz() {
    Object.keys(nodeEls).forEach(function (id) {
      var n = nodes[id];
      if (!n || !n.t) { return; }
      nodeEls[id].querySelectorAll("text").forEach(function (tx) {
        if (tx.dataset.gvText === undefined) { tx.dataset.gvText = tx.textContent; }
        var orig = tx.dataset.gvText, hide = (orig.indexOf("grad ") === 0 && !showGrad(n.t)) ||
          (orig.indexOf("data ") === 0 && !showValue(n.t));
        tx.textContent = hide ? orig.slice(0, 5) + "?" : orig;
      });
    });
    $("gv-quiz-toggle").checked = quiz.on;
    document.body.classList.toggle("gv-quiz-on", quiz.on);
  }
  // Opened as a quiz (a quiz link, or a file made with the quiz on): the student cannot switch
  // it off here; only a right answer, or the page's "Reveal gradients", shows a gradient.
  $("gv-quiz-toggle").disabled = !!data.quiz;
  $("gv-quiz-toggle").onchange = function (ev) {
    if (data.quiz) { ev.target.checked = true; return; }
    quiz.on = ev.target.checked; quiz.answered = {}; applyQuiz(); $("gv-inspector").style.display = "none";
    if (pz) { pz.resize(); }
  };
  applyQuiz();

  // ------------------------------------------------------------------ search
  $("gv-search").addEventListener("input", function (ev) {
    var q = ev.target.value.trim().toLowerCase(), first = null, count = 0;
    Object.keys(nodeEls).forEach(function (id) {
      var n = nodes[id], hit = q && n && (n.title.toLowerCase().indexOf(q) >= 0 || (n.t && n.t.name.toLowerCase() === q));
      nodeEls[id].classList.toggle("gv-match", !!hit);
      if (hit) { count += 1; first = first || (n.t && n.t.name.toLowerCase() === q ? id : null) || id; }
    });
    $("gv-search-count").textContent = q ? count + " found" : "";
    fitBar();  // the count takes room: the last controls may go into the ⋯ menu
    if (pz && first && nodeEls[first].style.display !== "none") {
      var r = nodeEls[first].getBoundingClientRect(), s = svg.getBoundingClientRect();
      pz.panBy({ x: s.left + s.width / 2 - (r.left + r.width / 2), y: s.top + s.height / 2 - (r.top + r.height / 2) });
    }
  });

  // ------------------------------------------------------------------ collapse layer clusters
  var collapsed = {};
  function chain(m) { var c = []; while (m && data.modules[m] && c.length < 64) { c.push(m); m = data.modules[m].parent; } return c; }
  function hiddenBy(m) { return chain(m).some(function (c) { return collapsed[c]; }); }
  function applyCollapse() {
    var hidden = {};
    Object.keys(nodeEls).forEach(function (id) {
      var n = nodes[id], hide = !!(n && n.module && hiddenBy(n.module));
      hidden[id] = hide;
      nodeEls[id].style.display = hide ? "none" : "";
    });
    edgeEls.forEach(function (e) { e.g.style.display = hidden[e.s] || hidden[e.d] ? "none" : ""; });
    Object.keys(clusterEls).forEach(function (m) {
      var g = clusterEls[m], mod = data.modules[m], label = g.querySelector("text");
      g.style.display = hiddenBy(mod.parent) ? "none" : "";
      g.classList.toggle("gv-collapsed", !!collapsed[m]);
      if (label) {
        var count = Object.keys(nodeEls).filter(function (id) { return nodes[id] && nodes[id].module && chain(nodes[id].module).indexOf(m) >= 0; }).length;
        label.textContent = (collapsed[m] ? "▸ " : "▾ ") + mod.label + (collapsed[m] ? " (" + count + " nodes hidden: click to open)" : "");
      }
    });
    var total = Object.keys(nodes).length;
    $("gv-shown").textContent = total ? Object.keys(nodeEls).filter(function (id) { return nodes[id] && !hidden[id]; }).length + " of " + total + " nodes drawn" : "";
  }
  Object.keys(clusterEls).forEach(function (m) {
    clusterEls[m].addEventListener("click", function (ev) {
      ev.stopPropagation();
      // (a big graph opens with its layers hidden here; those open here too)
      if (onPage && !collapsed[m]) { askFold(data.folds.concat([m]), null); return; }
      collapsed[m] = !collapsed[m]; applyCollapse();
    });
  });
  // On the page (data.folds: the layer calls the server folded), a closed layer is drawn again
  // by the server as one small node in a new layout; here only the request is sent.
  var onPage = Array.isArray(data.folds) && !!data.remember && window.parent !== window;
  function askFold(calls, depthValue) {
    document.body.classList.add("gv-waiting");
    try { window.parent.postMessage({ type: "gradviz-fold", calls: calls, depth: depthValue }, "*"); } catch (e) { /* no page */ }
  }
  function unfold(id) {
    var call = id.indexOf("fold_") === 0 ? id.slice(5) : null;
    if (onPage && call && data.folds.indexOf(call) >= 0) {
      askFold(data.folds.filter(function (c) { return c !== call; }), null);
      return true;
    }
    return false;
  }
  function setDepth(d) {
    collapsed = {};
    if (d !== "all") {
      Object.keys(clusterEls).forEach(function (m) { if (chain(m).length === Number(d) + 1) { collapsed[m] = true; } });
    }
    applyCollapse();
  }
  var depth = $("gv-depth"), maxDepth = 0;
  Object.keys(clusterEls).forEach(function (m) { maxDepth = Math.max(maxDepth, chain(m).length); });
  if (onPage) { maxDepth = Math.max(maxDepth, data.max_depth || 0); }  // folded layers are no clusters
  for (var d = 0; d < maxDepth; d++) {
    var o = document.createElement("option");
    o.value = String(d);
    o.textContent = d === 0 ? "layers closed" : d + " level" + (d > 1 ? "s" : "") + " open";
    depth.appendChild(o);
  }
  depth.disabled = maxDepth === 0;
  depth.onchange = function () { if (onPage) { askFold(null, depth.value); } else { setDepth(depth.value); } };
  if (onPage && data.fold_depth) { depth.value = data.fold_depth; }
  var folding = onPage && (data.folds.length > 0 || !!data.fold_depth);
  if (!folding && maxDepth > 0 && Object.keys(nodes).length > data.collapse_over) { depth.value = "0"; setDepth("0"); } else { applyCollapse(); }

  // ------------------------------------------------------------------ colour by
  var OKABE = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"];
  function shapeOf(g) { return g.querySelector("path, polygon, ellipse"); }
  Object.keys(nodeEls).forEach(function (id) { var s = shapeOf(nodeEls[id]); if (s) { s.dataset.gvFill = s.getAttribute("fill"); } });
  function recolour(by) {
    var legend = "", devices = [], m = 0;
    Object.keys(nodes).forEach(function (id) {
      var n = nodes[id];
      if (n.device && devices.indexOf(n.device) < 0) { devices.push(n.device); }
      if (n.t && n.t.gstats) { m = Math.max(m, Math.abs(n.t.gstats.mean)); }
    });
    Object.keys(nodeEls).forEach(function (id) {
      var s = shapeOf(nodeEls[id]), n = nodes[id];
      if (!s || !n) { return; }
      var fill = s.dataset.gvFill;
      if (by === "device") { fill = n.device ? OKABE[devices.indexOf(n.device) % 8] : "#ffffff"; }
      if (by === "gradient") { fill = n.t && n.t.gstats && showGrad(n.t) ? colour(n.t.gstats.mean, m) : "#eeeeee"; }
      s.setAttribute("fill", fill);
    });
    if (by === "device") {
      legend = devices.map(function (d, i) { return "<span class='gv-key' style='background:" + OKABE[i % 8] + "'></span>" + esc(d); }).join(" ");
    } else if (by === "gradient" && !(m > 0)) {
      legend = "no gradients to colour by: run backward first" + (quiz.on ? " (or they are hidden in the quiz)" : "");
    } else if (by === "gradient") {
      legend = "mean gradient: <span class='gv-key' style='background:" + colour(-m, m) + "'></span>" + esc(num(-m)) +
        " <span class='gv-key' style='background:#fff'></span>0 <span class='gv-key' style='background:" + colour(m, m) + "'></span>" + esc(num(m)) +
        " <span class='gv-key' style='background:#eee'></span>no gradient" + (quiz.on ? " (hidden in the quiz)" : "");
    } else {
      legend = data.roles.map(function (r) { return "<span class='gv-key' style='background:" + r[1] + "'></span>" + esc(r[0]); }).join(" ");
    }
    $("gv-legend").innerHTML = legend;
  }
  // ------------------------------------------------------------------ the toolbar on one line
  // The toolbar never wraps: when its controls do not fit the frame's width, the last ones
  // (nodes drawn, quiz, layers, colour by) move into the ⋯ menu, as few as it takes; they
  // come back when the frame is wide enough again.
  var bar = $("gv-bar"), menu = $("gv-menu"), more = $("gv-more");
  var extras = Array.prototype.slice.call(bar.querySelectorAll(".gv-more-item"));
  function closeMenu() { menu.hidden = true; more.setAttribute("aria-expanded", "false"); }
  function fitBar() {
    extras.forEach(function (el) { bar.insertBefore(el, more); });
    more.hidden = true;
    if (bar.scrollWidth <= bar.clientWidth) { closeMenu(); return; }
    more.hidden = false;
    for (var i = extras.length - 1; i >= 0 && bar.scrollWidth > bar.clientWidth; i--) {
      menu.insertBefore(extras[i], menu.firstChild);
    }
  }
  more.onclick = function (ev) {
    ev.stopPropagation();
    var open = menu.hidden;
    menu.style.top = bar.offsetTop + bar.offsetHeight + "px";
    menu.hidden = !open;
    more.setAttribute("aria-expanded", open ? "true" : "false");
  };
  menu.addEventListener("click", function (ev) { ev.stopPropagation(); });
  document.addEventListener("click", closeMenu);
  document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") { closeMenu(); } });
  window.addEventListener("resize", fitBar);
  fitBar();

  // ------------------------------------------------------------------ a walk-through step's gradients
  // The step's node passes gradients back to its inputs: a dot travels each edge from the
  // step's end to the input's (about FLOW_MS), then the inputs are marked as having received
  // and the gradient is written beside the edge. With reduced motion asked for, no travel:
  // the marks and gradients at once. Nothing is hidden meanwhile: the graph stays drawn.
  var FLOW_MS = 600, SVGNS = "http://www.w3.org/2000/svg";
  function edgeEl(src, dst) {
    for (var i = 0; i < edgeEls.length; i++) { if (edgeEls[i].s === src && edgeEls[i].d === dst) { return edgeEls[i]; } }
    return null;
  }
  function flowLabel(e, f) {
    var n = nodes[f.to], path = e.g.querySelector("path");
    if (!f.grad || !path || (n && n.t && !showGrad(n.t))) { return; }
    var len = path.getTotalLength(), p = path.getPointAtLength(len / 2), tx = document.createElementNS(SVGNS, "text");
    tx.setAttribute("class", "gv-flow-grad");
    tx.setAttribute("x", p.x + 6); tx.setAttribute("y", p.y + 4);
    var full = "grad " + String(f.grad);  // cut short with … (the step's list has it whole)
    tx.textContent = full.length > 65 ? full.slice(0, 64) + "…" : full;
    e.g.appendChild(tx);
  }
  function arrive(shown) {
    shown.forEach(function (x) {
      x.e.g.classList.remove("gv-flowing");
      x.e.g.classList.add("gv-flowed");
      if (x.dot && x.dot.parentNode) { x.dot.parentNode.removeChild(x.dot); }
      if (nodeEls[x.f.to]) { nodeEls[x.f.to].classList.add("gv-received"); }
      flowLabel(x.e, x.f);
    });
    document.body.dataset.gvFlowed = shown.map(function (x) { return x.f.src + "->" + x.f.dst; }).join(" ");
  }
  // On the page a step travels once, when the visitor moves to it: the frame drawn again at
  // the same step (a rerun, another choice on the page, the tab reloaded) shows the step's end
  // at once. This tab's storage keeps the step drawn last (the program's text, the graph's
  // shape and the step's node) and whether it travelled yet: another program, or any other
  // step drawn since (step 0 included), travels again. A frame drawn while hidden (another
  // tab of the page open) travels once shown.
  function stepKey() {
    var text = String(data.source || ""), h = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) { h = Math.imul(h ^ text.charCodeAt(i), 0x01000193); }
    return [(h >>> 0).toString(16), text.length, data.shape, data.focus || ""].join(" ");
  }
  var STEP_KEY = stepKey();
  function lastStep() {
    try { return JSON.parse(store.getItem("gradviz-step") || "null") || {}; } catch (e) { return {}; }
  }
  function markStep(played) {
    try { store.setItem("gradviz-step", JSON.stringify({ key: STEP_KEY, played: played })); } catch (e) { /* travels again */ }
  }
  if (store && lastStep().key !== STEP_KEY) { markStep(false); }
  function playedBefore() {
    if (!store) { return false; }
    var last = lastStep(), again = last.key === STEP_KEY && last.played === true;
    markStep(true);
    return again;
  }
  function playFlow() {
    var again = playedBefore();
    var shown = (data.flow || []).map(function (f) { return { f: f, e: edgeEl(f.src, f.dst) }; })
      .filter(function (x) { return x.e && x.e.g.style.display !== "none" && x.e.g.querySelector("path"); });
    if (!shown.length) { return; }
    var still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    if (still || again) { arrive(shown); return; }
    shown.forEach(function (x) {
      x.path = x.e.g.querySelector("path");
      x.len = x.path.getTotalLength();
      x.dot = document.createElementNS(SVGNS, "circle");
      x.dot.setAttribute("class", "gv-flow-dot");
      x.dot.setAttribute("r", "6");
      x.e.g.classList.add("gv-flowing");
      x.e.g.appendChild(x.dot);
    });
    var start = null;
    function frame(now) {
      if (start === null) { start = now; }
      var k = Math.min(1, (now - start) / FLOW_MS);
      shown.forEach(function (x) {  // drawn from the input to the step's node: travelled backwards
        var p = x.path.getPointAtLength(x.len * (1 - k));
        x.dot.setAttribute("cx", p.x); x.dot.setAttribute("cy", p.y);
      });
      if (k < 1) { window.requestAnimationFrame(frame); } else { arrive(shown); }
    }
    window.requestAnimationFrame(frame);
  }

  $("gv-colour").onchange = function (ev) { recolour(ev.target.value); saveView(); };
  recolour("role");
  whenShown(function () {  // the toolbar and legend are filled in: fit the frame left
    startPanZoom();
    var kept = false;
    try { kept = restoreView(); } catch (e) { kept = false; }  // a view that cannot be put back
    if (!kept) { fitView(); }
    try { inView(data.focus); } catch (e) { /* the view stays as it is */ }
    detail();
    document.body.dataset.gvReady = "1";
    writeView();
    fitBar();  // the counts are written: measured again
    try { playFlow(); } catch (e) { /* the step's node stays highlighted without it */ }
  });
})();
