// onnxdbg view: draws the model embedded in the page. The main graph is cut into chunks of
// consecutive nodes; each chunk is laid out by dagre when it first comes into view (then the rest
// in the background), so a 10,000-node model is drawn and searchable at once. Chunks are stacked
// top to bottom; edges between chunks are dashed. Subgraphs (If/Loop/Scan) expand in place.
// A diff is drawn merged (one graph) or side by side (two columns of chunks, one per model);
// highlighted nodes (e.g. what `onnxdbg reduce` kept) get a halo and a list in the side panel.
'use strict';
(function () {
  const D = JSON.parse(document.getElementById('onnxdbg-data').textContent);
  const NODES = D.nodes, TENSORS = D.tensors, GRAPHS = D.graphs;
  const CHUNK = 48;             // main-graph nodes per chunk: dagre is superlinear, keep them small
  const NODE_H = 38, RANKSEP = 34, GAP = 36;
  const COLGAP = 40;            // side by side: half the gap between the two models' columns
  const SVGNS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const svg = $('canvas'), viewport = $('viewport'), chunkLayer = $('chunks'), crossLayer = $('cross');
  const api = { ready: false, firstRender: null, layoutDone: false, errors: [] };
  window.onnxdbgViewer = api;

  // ---- indices ------------------------------------------------------------------------------
  const producer = new Int32Array(TENSORS.length).fill(-1);
  const consumers = TENSORS.map(() => []);
  NODES.forEach((n, i) => {
    n.u.forEach((t) => { if (t >= 0 && producer[t] < 0) producer[t] = i; });
    n.i.forEach((t) => { if (t >= 0) consumers[t].push(i); });
  });
  const report = D.report || null;
  const tol = report && report.atol != null ? report.atol : null;
  const HL = D.highlight || null;
  const hlSet = new Set(HL ? HL.nodes : []);

  // Root graphs: the viewed model's main graph (0) and, with a diff, the other model's (SIDE_G).
  // Merged layout: graph 0 plus the other model's extra nodes (df 'b' in graph 0); side by side:
  // graph 0 without those, and the other model whole in a second column.
  const DIFF = D.diff || null;
  const SIDE_G = DIFF && DIFF.side_graph >= 0 ? DIFF.side_graph : -1;
  const isRoot = (g) => GRAPHS[g].parent < 0;
  const rootOf = (i) => { let g = NODES[i].g; while (!isRoot(g)) g = NODES[GRAPHS[g].parent].g; return g; };
  const sideB = NODES.map((n, i) => SIDE_G >= 0 && rootOf(i) === SIDE_G);
  const mergedOnly = NODES.map((n) => n.df === 'b' && n.g === 0);
  let layout = DIFF && DIFF.layout === 'side' && SIDE_G >= 0 ? 'side' : 'merged';
  const inLayout = (i) => (layout === 'side' ? !mergedOnly[i] : !sideB[i]);

  // Main-graph order: the viewed model's nodes in file order; nodes only in the diffed model go
  // right after the latest node producing one of their inputs.
  // Constant nodes are drawn like initializers: not as boxes, but as weights of their consumers.
  const folded = NODES.map((n) => n.o === 'Constant' && !n.d && n.s.length === 0);
  const key = new Float64Array(NODES.length);
  let bump = 0;
  NODES.forEach((n, i) => {
    if (!isRoot(n.g) || folded[i]) return;
    if (mergedOnly[i]) {
      let k = -1;
      n.i.forEach((t) => { if (t >= 0 && producer[t] >= 0 && producer[t] !== i) k = Math.max(k, key[producer[t]]); });
      key[i] = k + 1e-6 * (++bump);
    } else key[i] = i;
  });
  const ownerOf = (i) => { let n = i; while (!isRoot(NODES[n].g)) n = GRAPHS[NODES[n].g].parent; return n; };
  const subNodes = GRAPHS.map(() => []);
  NODES.forEach((n, i) => { if (!isRoot(n.g) && !folded[i]) subNodes[n.g].push(i); });
  // A folded Constant stands for its first consumer when searched or linked.
  const target = (i) => { if (!folded[i]) return i; for (const t of NODES[i].u) if (t >= 0 && consumers[t].length) return target(consumers[t][0]); return -1; };
  const expanded = new Set();

  // Chunks of the current layout, column by column (0: the viewed model, 1: the other one side
  // by side), and the chunk of every node shown (subgraph nodes: their outermost owner's).
  let chunks = [], chunkOf = new Int32Array(NODES.length).fill(-1);
  function buildChunks() {
    chunks = [];
    chunkOf = new Int32Array(NODES.length).fill(-1);
    const roots = layout === 'side' ? [0, SIDE_G] : [0];
    roots.forEach((root, col) => {
      const main = [];
      NODES.forEach((n, i) => { if (n.g === root && !folded[i] && inLayout(i)) main.push(i); });
      main.sort((a, b) => key[a] - key[b]);
      for (let s = 0; s < main.length; s += CHUNK) {
        const members = main.slice(s, s + CHUNK);
        const c = { index: chunks.length, col, members, layout: null, el: null, est: 0, y: 0 };
        members.forEach((m) => { chunkOf[m] = c.index; });
        chunks.push(c);
      }
    });
    NODES.forEach((n, i) => { if (!isRoot(n.g) && inLayout(i)) chunkOf[i] = chunkOf[ownerOf(i)]; });
    chunks.forEach(estimate);
  }

  // Height estimate of a chunk before layout: its longest path in ranks.
  function estimate(c) {
    const rank = new Map();
    let maxr = 0;
    for (const m of c.members) {
      let r = 0;
      for (const t of NODES[m].i) {
        const p = t >= 0 ? producer[t] : -1;
        if (p >= 0 && rank.has(p)) r = Math.max(r, rank.get(p) + 1);
      }
      rank.set(m, r);
      maxr = Math.max(maxr, r);
    }
    c.est = (maxr + 1) * (NODE_H + RANKSEP) + 40;
  }

  // ---- labels and colours -----------------------------------------------------------------------
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  const short = (s, n) => (s.length > n ? s.slice(0, n - 1) + '\u2026' : s);
  const fmt = (v) => (v == null ? '-' : typeof v === 'string' ? v : Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(3).replace(/\.?0+e/, 'e') : String(+v.toPrecision(5)));
  // A node for people, as onnxdbg's node_label (src/model/graph.h) writes it everywhere else:
  // "#12 Conv 'c1'" (index in its graph, op type with its domain unless the default, name), or
  // "#12 Conv" when unnamed.
  const opLabel = (n) => (n.d ? n.d + '.' : '') + n.o;
  const nodeLabel = (i) => { const n = NODES[i]; return `#${n.x != null ? n.x : i} ${opLabel(n)}` + (n.n ? ` '${n.n}'` : ''); };
  const nodeWidth = (n) => Math.min(240, Math.max(90, 7.2 * Math.max(n.o.length + 2, Math.min(30, n.n.length)) + 16));
  function errColor(e) {
    if (!e) return null;
    if (e.nan) return '#c77dde';
    const err = e.err === 'inf' ? Infinity : e.err;
    if (err == null) return null;
    const t0 = tol != null && tol > 0 ? tol : 1e-5;
    const r = err / t0;
    if (r <= 1 && e.pass) return '#b9e4a8';
    const f = Math.max(0, Math.min(1, Math.log10(Math.max(r, 1)) / 4));
    const stops = [[255, 224, 138], [245, 160, 90], [232, 83, 74]];
    const x = f * 2, k = Math.min(1, Math.floor(x)), u = x - k;
    const c = stops[k].map((v, j) => Math.round(v + (stops[k + 1][j] - v) * u));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }
  const edgeLabel = (t) => { const x = TENSORS[t]; return x ? (x.t + (x.s ? ' ' + x.s : '')).trim() : ''; };

  // ---- layout -------------------------------------------------------------------------------
  function visibleMembers(c) {
    const out = [];
    const add = (i) => {
      out.push(i);
      if (expanded.has(i)) NODES[i].s.forEach((g) => subNodes[g].forEach(add));
    };
    c.members.forEach(add);
    return out;
  }
  function layoutChunk(c) {
    const t0 = performance.now();
    const members = visibleMembers(c);
    const inChunk = new Set(members);
    const build = (compound) => {
      const g = new dagre.graphlib.Graph({ compound, multigraph: false });
      g.setGraph({ rankdir: 'TB', nodesep: 22, ranksep: RANKSEP, marginx: 16, marginy: 16 });
      g.setDefaultEdgeLabel(() => ({}));
      for (const m of members) {
        const n = NODES[m];
        g.setNode('n' + m, { width: nodeWidth(n) + (n.s.length ? 22 : 0), height: NODE_H });
        if (compound && !isRoot(n.g)) {
          g.setNode('g' + n.g, {});
          g.setParent('n' + m, 'g' + n.g);
          const owner = GRAPHS[n.g].parent;
          if (!isRoot(NODES[owner].g)) g.setParent('g' + n.g, 'g' + NODES[owner].g);
        }
      }
      const io = [];
      for (const m of members) {
        const n = NODES[m];
        let fed = false;
        for (const t of n.i) {
          if (t < 0) continue;
          const p = producer[t];
          if (p >= 0 && p !== m && inChunk.has(p)) { g.setEdge('n' + p, 'n' + m); fed = true; }
          else if (p < 0 && TENSORS[t].k === 'in' && !g.hasNode('t' + t)) {
            g.setNode('t' + t, { width: Math.min(200, 7 * TENSORS[t].n.length + 24), height: 26 }); io.push(t);
            g.setEdge('t' + t, 'n' + m);
          } else if (p < 0 && TENSORS[t].k === 'in') g.setEdge('t' + t, 'n' + m);
        }
        if (!isRoot(n.g) && !fed) {
          const owner = GRAPHS[n.g].parent;
          if (inChunk.has(owner)) g.setEdge('n' + owner, 'n' + m, { minlen: 1, weight: 0 });
        }
        for (const t of n.u) {
          if (t >= 0 && TENSORS[t].k === 'out' && isRoot(n.g)) {
            g.setNode('t' + t, { width: Math.min(200, 7 * TENSORS[t].n.length + 24), height: 26 }); io.push(t);
            g.setEdge('n' + m, 't' + t);
          }
        }
      }
      return g;
    };
    let g;
    try { g = build(true); dagre.layout(g); } catch (e) { g = build(false); dagre.layout(g); }
    const pos = new Map();
    g.nodes().forEach((id) => {
      const v = g.node(id);
      if (v && v.x != null && (id[0] === 'n' || id[0] === 't')) pos.set(id, { x: v.x, y: v.y, w: v.width, h: v.height });
    });
    const clusters = [];
    g.nodes().forEach((id) => {
      if (id[0] !== 'g') return;
      const v = g.node(id);
      if (v && v.width) clusters.push({ g: +id.slice(1), x: v.x, y: v.y, w: v.width, h: v.height });
    });
    const edges = g.edges().map((e) => ({ v: e.v, w: e.w, points: g.edge(e).points }));
    const gg = g.graph();
    c.layout = { pos, edges, clusters, w: gg.width || 100, h: gg.height || 60, ms: performance.now() - t0 };
    if (c.el) { c.el.remove(); c.el = null; }
    placeChunks();
  }
  function placeChunks() {
    const y = [0, 0];
    for (const c of chunks) {
      const x = chunkX(c);
      // A drawn chunk that moves (one above it was laid out) leaves its dashed edges behind.
      if (c.el && c.el.isConnected && (c.y !== y[c.col] || c.x !== x)) crossStale = true;
      c.y = y[c.col];
      c.x = x;
      y[c.col] += (c.layout ? c.layout.h : c.est) + GAP;
      if (c.el) c.el.setAttribute('transform', `translate(${x},${c.y})`);
    }
    totalHeight = Math.max(y[0], y[1]);
  }
  let totalHeight = 0, crossStale = false;
  const chunkWidth = (c) => (c.layout ? c.layout.w : 300);
  // Left edge of a chunk: centred on x = 0, or side by side the viewed model right-aligned left of
  // the middle and the other model left-aligned right of it (stable while chunks are laid out).
  const chunkX = (c) => (layout !== 'side' ? -chunkWidth(c) / 2 : c.col === 0 ? -COLGAP - chunkWidth(c) : COLGAP);

  // ---- drawing ------------------------------------------------------------------------------
  const el = (tag, attrs, parent) => {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  };
  const path = (pts) => 'M' + pts.map((p) => p.x.toFixed(1) + ',' + p.y.toFixed(1)).join('L');
  const nodeEls = new Map();
  let selected = -1, firstNode = report && report.first && report.first.index >= 0 ? report.first.index : -1;
  const found = new Set();
  function drawChunk(c) {
    const L = c.layout;
    const root = el('g', { class: 'chunk', transform: `translate(${chunkX(c)},${c.y})` });
    for (const cl of L.clusters) {
      el('rect', { class: 'cluster', x: cl.x - cl.w / 2, y: cl.y - cl.h / 2, width: cl.w, height: cl.h, rx: 6 }, root);
      const t = el('text', { class: 'clabel', x: cl.x - cl.w / 2 + 6, y: cl.y - cl.h / 2 + 11 }, root);
      t.textContent = GRAPHS[cl.g].attribute + ' of ' + (NODES[GRAPHS[cl.g].parent].n || NODES[GRAPHS[cl.g].parent].o);
    }
    for (const e of L.edges) {
      el('path', { class: 'edge', d: path(e.points), 'marker-end': 'url(#arrow)' }, root);
      if (e.v[0] === 'n') {
        const p = +e.v.slice(1), w = e.w[0] === 'n' ? +e.w.slice(1) : -1;
        let t = -1;
        for (const u of NODES[p].u) if (u >= 0 && (w < 0 || NODES[w].i.includes(u))) { t = u; break; }
        if (t >= 0 && e.points.length >= 2) {
          const a = e.points[0], b = e.points[1];
          const tx = el('text', { class: 'elabel', x: (a.x + b.x) / 2 + 4, y: (a.y + b.y) / 2 + 3 }, root);
          tx.textContent = short(edgeLabel(t), 40);
        }
      }
    }
    for (const [id, p] of L.pos) {
      const g = el('g', { class: 'node', transform: `translate(${p.x - p.w / 2},${p.y - p.h / 2})` }, root);
      if (id[0] === 't') {
        const t = +id.slice(1);
        g.setAttribute('class', 'node io');
        el('rect', { class: 'box', width: p.w, height: p.h, rx: 13 }, g);
        const tx = el('text', { x: p.w / 2, y: 17, 'text-anchor': 'middle' }, g);
        tx.textContent = short(TENSORS[t].n, 26);
        g.dataset.tensor = t;
        continue;
      }
      const i = +id.slice(1), n = NODES[i];
      g.dataset.id = i;
      nodeEls.set(i, g);
      decorate(g, i);
      if (hlSet.has(i)) el('rect', { class: 'halo', x: -5, y: -5, width: p.w + 10, height: p.h + 10, rx: 8 }, g);
      const r = el('rect', { class: 'box', width: p.w, height: p.h, rx: 4 }, g);
      const col = errColor(n.e);
      if (col) r.style.fill = col;
      const op = el('text', { class: 'op', x: 6, y: 15 }, g);
      op.textContent = n.o;
      const nm = el('text', { class: 'nm', x: 6, y: 30 }, g);
      nm.textContent = short(n.n, Math.floor((p.w - (n.s.length ? 28 : 10)) / 6.2));
      let bx = p.w - 4;
      if (n.df === 'c') { const b = el('text', { class: 'badge diff-mark', x: bx - 10, y: 12, fill: '#bf8700' }, g); b.textContent = '\u0394'; bx -= 14; }
      if (n.l) {
        const sev = n.l.some((f) => f[0] === 'error') ? 'error' : n.l.some((f) => f[0] === 'warning') ? 'warning' : 'info';
        const b = el('text', { class: 'badge lint-mark lint-' + sev, x: bx - 8, y: 12, fill: sev === 'error' ? '#cf222e' : sev === 'warning' ? '#9a6700' : '#0969da' }, g);
        b.textContent = '!';
      }
      if (n.s.length) {
        const tg = el('g', { class: 'toggle', transform: `translate(${p.w - 20},${p.h - 20})` }, g);
        tg.dataset.toggle = i;
        el('rect', { width: 16, height: 16, rx: 3 }, tg);
        const tt = el('text', { x: 8, y: 12.5, 'text-anchor': 'middle' }, tg);
        tt.textContent = expanded.has(i) ? '\u2212' : '+';
      }
      const title = el('title', {}, g);
      title.textContent = nodeLabel(i) + (n.e ? `\nerror ${fmt(n.e.err)} (${n.e.backend})` : '') + (n.dw ? '\n' + n.dw.join('\n') : '');
    }
    c.el = root;
  }
  function decorate(g, i) {
    const n = NODES[i];
    let cls = 'node';
    if (n.df) cls += ' df-' + n.df;
    if (i === selected) cls += ' selected';
    if (i === firstNode) cls += ' first';
    if (found.has(i)) cls += ' found';
    if (hlSet.has(i)) cls += ' hl';
    if (sideB[i]) cls += ' side-b';
    g.setAttribute('class', cls);
  }
  function nodeCenter(i) {
    if (chunkOf[i] < 0) return null;
    const c = chunks[chunkOf[i]];
    if (!c.layout) return null;
    const p = c.layout.pos.get('n' + i);
    if (!p) return null;
    return { x: p.x + chunkX(c), y: p.y + c.y, w: p.w, h: p.h };
  }

  // ---- view: pan, zoom, virtualisation ----------------------------------------------------------
  const view = { x: 0, y: 0, k: 1 };
  let anchor = null;  // {chunk, dy}: keeps the view still when chunks above change height
  function applyView() {
    viewport.setAttribute('transform', `translate(${view.x},${view.y}) scale(${view.k})`);
    svg.classList.toggle('far', view.k < 0.35);
    scheduleUpdate();
  }
  let updatePending = false;
  function scheduleUpdate() { if (!updatePending) { updatePending = true; requestAnimationFrame(update); } }
  function visibleRange() {
    const h = svg.clientHeight || 800;
    const m = 400 / view.k;
    return [(-view.y) / view.k - m, (h - view.y) / view.k + m];
  }
  function update() {
    updatePending = false;
    const [y0, y1] = visibleRange();
    let budget = 6, changed = false;
    for (const c of chunks) {
      const top = c.y, bottom = c.y + (c.layout ? c.layout.h : c.est);
      const vis = bottom >= y0 && top <= y1;
      if (vis) {
        if (!c.layout) {
          if (budget-- <= 0) { scheduleUpdate(); continue; }
          const before = c.y;
          layoutChunk(c);
          changed = true;
          if (c.y !== before) continue;
        }
        if (!c.el) drawChunk(c);
        if (!c.el.isConnected) { chunkLayer.appendChild(c.el); changed = true; }
      } else if (c.el && c.el.isConnected) { c.el.remove(); changed = true; }
    }
    if (changed || crossStale) { keepAnchor(); drawCross(); crossStale = false; }
    setAnchor();
  }
  function setAnchor() {
    const h = svg.clientHeight || 800;
    const cy = (h / 2 - view.y) / view.k;
    for (const c of chunks) if (c.y + (c.layout ? c.layout.h : c.est) >= cy) { anchor = { c, dy: cy - c.y }; return; }
  }
  function keepAnchor() {
    if (!anchor) return;
    const h = svg.clientHeight || 800;
    const cy = (h / 2 - view.y) / view.k;
    const want = anchor.c.y + anchor.dy;
    if (Math.abs(want - cy) > 0.5) { view.y -= (want - cy) * view.k; viewport.setAttribute('transform', `translate(${view.x},${view.y}) scale(${view.k})`); scheduleUpdate(); }
  }
  // Edges between chunks: from the producer's bottom to the consumer's top, dashed.
  function drawCross() {
    crossLayer.textContent = '';
    for (const c of chunks) {
      if (!c.el || !c.el.isConnected) continue;
      for (const [id] of c.layout.pos) {
        if (id[0] !== 'n') continue;
        const i = +id.slice(1);
        for (const t of NODES[i].i) {
          const p = t >= 0 ? producer[t] : -1;
          if (p < 0 || folded[p] || chunkOf[p] < 0 || chunkOf[p] === c.index || c.layout.pos.has('n' + p)) continue;
          const a = nodeCenter(p), b = nodeCenter(i);
          if (!a || !b || !chunks[chunkOf[p]].el || !chunks[chunkOf[p]].el.isConnected) continue;
          const y0 = a.y + a.h / 2, y1 = b.y - b.h / 2, my = (y1 - y0) / 2;
          el('path', { class: 'edge cross', d: `M${a.x},${y0} C${a.x},${y0 + my} ${b.x},${y1 - my} ${b.x},${y1}`, 'marker-end': 'url(#arrow)' }, crossLayer);
        }
      }
    }
  }
  function centerOn(i, zoom) {
    if (i < 0 || chunkOf[i] < 0) return;
    const c = chunks[chunkOf[i]];
    if (!c.layout) layoutChunk(c);
    if (zoom) view.k = zoom;
    const p = nodeCenter(i);
    if (!p) return;
    view.x = svg.clientWidth / 2 - p.x * view.k;
    view.y = svg.clientHeight / 2 - p.y * view.k;
    anchor = null;
    applyView();
    update();
  }
  function fitWidth() {
    // The first chunk of each column sets the width.
    const side = layout === 'side';
    let w = side ? 2 * COLGAP : 0;
    for (const col of side ? [0, 1] : [0]) {
      const c = chunks.find((x) => x.col === col);
      if (c && !c.layout) layoutChunk(c);
      w += c && c.layout ? c.layout.w : 400;
    }
    view.k = Math.max(side ? 0.3 : 0.7, Math.min(1.2, (svg.clientWidth - 40) / w));
    view.x = svg.clientWidth / 2;
    view.y = side ? 34 : 20;
    anchor = null;
    applyView();
  }
  let drag = null;
  svg.addEventListener('mousedown', (e) => { drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false }; });
  window.addEventListener('mousemove', (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; svg.classList.add('panning'); }
    view.x = drag.vx + dx; view.y = drag.vy + dy; applyView();
  });
  window.addEventListener('mouseup', () => { svg.classList.remove('panning'); setTimeout(() => { drag = null; }, 0); });
  svg.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (e.ctrlKey || e.metaKey) {
      const r = svg.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
      const k = Math.max(0.05, Math.min(3, view.k * Math.exp(-e.deltaY * 0.002)));
      view.x = mx - (mx - view.x) * (k / view.k); view.y = my - (my - view.y) * (k / view.k); view.k = k;
    } else { view.x -= e.deltaX; view.y -= e.deltaY; }
    applyView();
  }, { passive: false });
  const zoomBy = (f) => { const cx = svg.clientWidth / 2, cy = svg.clientHeight / 2, k = Math.max(0.05, Math.min(3, view.k * f)); view.x = cx - (cx - view.x) * (k / view.k); view.y = cy - (cy - view.y) * (k / view.k); view.k = k; applyView(); };
  $('zoom-in').onclick = () => zoomBy(1.25);
  $('zoom-out').onclick = () => zoomBy(0.8);
  $('fit').onclick = fitWidth;
  window.addEventListener('resize', scheduleUpdate);

  svg.addEventListener('click', (e) => {
    if (drag && drag.moved) return;
    const tg = e.target.closest('.toggle');
    if (tg) { toggle(+tg.dataset.toggle); return; }
    const g = e.target.closest('.node');
    if (g && g.dataset.id != null) select(+g.dataset.id);
    else if (g && g.dataset.tensor != null) showTensor(+g.dataset.tensor);
  });
  function toggle(i) {
    if (expanded.has(i)) expanded.delete(i); else expanded.add(i);
    const c = chunks[chunkOf[i]];
    layoutChunk(c);
    update();
    drawCross();
  }

  // ---- details --------------------------------------------------------------------------------
  // `label`: how the result names the node, where it differs from the page's own label (a node
  // the layerwise pass met inside an If branch is named by its path there).
  const nodeLink = (i, label) => `<a class="link" data-node="${i}">${esc(label || nodeLabel(i))}</a>`;
  function weightHtml(w) {
    if (!w) return '';
    let s = `<div class="w">${esc(w.source)} ${esc(w.dtype)} [${w.shape.join(', ')}], ${w.bytes} bytes${w.external ? ', external' : ''}`;
    if (w.min != null) s += `<br>min ${fmt(w.min)} max ${fmt(w.max)} mean ${fmt(w.mean)} std ${fmt(w.std)}`;
    if (w.nan || w.inf) s += `<br><b>NaN ${w.nan || 0}, Inf ${w.inf || 0}</b>`;
    if (w.error) s += `<br>${esc(w.error)}`;
    return s + '</div>';
  }
  function tensorRows(list, producers) {
    return list.map((t, k) => {
      if (t < 0) return `<tr><td>${k}</td><td colspan="2"><i>omitted</i></td></tr>`;
      const x = TENSORS[t], p = producer[t];
      const from = producers && p >= 0 ? `<br>from ${nodeLink(p)}` : '';
      const to = !producers ? consumers[t].filter(inLayout).slice(0, 8).map(nodeLink).join(', ') : '';
      return `<tr><td>${k}</td><td class="tensor-name">${esc(x.n)}${from}${to ? '<br>to ' + to : ''}${weightHtml(x.w)}</td><td>${esc(x.t)} ${esc(x.s)}</td></tr>`;
    }).join('');
  }
  function select(i) {
    const prev = selected;
    selected = i;
    if (prev >= 0 && nodeEls.has(prev)) decorate(nodeEls.get(prev), prev);
    if (nodeEls.has(i)) decorate(nodeEls.get(i), i);
    const n = NODES[i];
    // The title reads as nodeLabel(i); the name alone is in .detail-name.
    let h = `<h3 id="detail-title">#${n.x != null ? n.x : i} ${esc(opLabel(n))}${n.n ? ` '<span class="detail-name">${esc(n.n)}</span>'` : ''}</h3>`;
    h += `<div>${n.d ? 'domain ' + esc(n.d) + ', ' : ''}graph ${esc(GRAPHS[n.g].path)}${sideB[i] ? ' of ' + esc(DIFF.b) : ''}${n.df === 'b' ? ' (only in ' + esc(DIFF.b) + ')' : ''}</div>`;
    if (n.p != null && layout === 'side') h += `<p class="pair">matched in ${esc(sideB[i] ? DIFF.a : DIFF.b)}: ${nodeLink(n.p)}</p>`;
    if (hlSet.has(i)) h += `<p class="hl-note">in <b>${esc(HL.title)}</b></p>`;
    if (n.e) h += `<h3>Error</h3><table class="errors"><tr><td>error</td><td class="err-value">${fmt(n.e.err)}${n.e.own != null ? ' (own)' : ''}</td></tr><tr><td>max abs</td><td>${fmt(n.e.abs)}${n.e.steps ? ` (${fmt(n.e.steps[0])} ${esc(n.e.steps[1])}${n.e.deq != null ? ' quantization' : ''} step${n.e.steps[0] === 1 ? '' : 's'}${n.e.deq != null ? ', ' + fmt(n.e.deq) + ' dequantized' : ''})` : ''}</td></tr><tr><td>max rel</td><td>${fmt(n.e.rel)}</td></tr><tr><td>backend</td><td>${esc(n.e.backend)}</td></tr><tr><td>tensor</td><td>${esc(n.e.tensor)}</td></tr><tr><td>result</td><td>${n.e.pass ? 'pass' : '<b>FAIL</b>'}${n.e.nan ? ', NaN/Inf' : ''}</td></tr>${n.e.note ? `<tr><td>note</td><td>${esc(n.e.note)}</td></tr>` : ''}</table>`;
    if (n.dw) h += `<h3>Changed</h3><ul class="diff-what">${n.dw.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>`;
    if (n.df === 'a') h += `<p><b>Only in ${esc(D.diff.a)}</b></p>`;
    if (n.l) h += `<h3>Lint</h3><ul class="lint">${n.l.map((f) => `<li><b>${esc(f[0])}</b> ${esc(f[1])}: ${esc(f[2])}</li>`).join('')}</ul>`;
    h += `<h3>Attributes</h3>`;
    h += n.a.length ? `<table class="attributes">${n.a.map((a) => `<tr><td class="attr-name">${esc(a[0])}</td><td class="attr-value">${esc(a[2])}</td><td>${esc(a[1])}</td></tr>`).join('')}</table>` : '<p class="hint">none</p>';
    if (n.s.length) h += `<p>${n.s.map((g) => esc(GRAPHS[g].attribute) + ': ' + subNodes[g].length + ' nodes').join(', ')} <a class="link" data-toggle="${i}">${expanded.has(i) ? 'collapse' : 'expand'}</a></p>`;
    h += `<h3>Inputs</h3><table class="inputs">${tensorRows(n.i, true)}</table>`;
    h += `<h3>Outputs</h3><table class="outputs">${tensorRows(n.u, false)}</table>`;
    $('details').innerHTML = h;
  }
  function showTensor(t) {
    const x = TENSORS[t];
    $('details').innerHTML = `<h3>${esc(x.k === 'in' ? 'Graph input' : x.k === 'out' ? 'Graph output' : 'Tensor')} ${esc(x.n)}</h3><p>${esc(x.t)} ${esc(x.s)}</p>${weightHtml(x.w)}<p>consumers: ${consumers[t].filter(inLayout).slice(0, 20).map(nodeLink).join(', ')}</p>`;
  }
  document.addEventListener('click', (e) => {
    const a = e.target.closest('a.link');
    if (!a) return;
    if (a.dataset.node != null) goTo(+a.dataset.node);
    else if (a.dataset.toggle != null) { toggle(+a.dataset.toggle); select(+a.dataset.toggle); }
  });
  function goTo(i) {
    // A node of the layout not shown (the other model's, merged or side by side): its match.
    if (!inLayout(i)) { if (NODES[i].p != null && inLayout(NODES[i].p)) i = NODES[i].p; else return; }
    // Subgraph nodes: expand every owner first.
    const owners = [];
    for (let n = i; !isRoot(NODES[n].g); n = GRAPHS[NODES[n].g].parent) owners.push(GRAPHS[NODES[n].g].parent);
    let relayout = false;
    for (const o of owners) if (!expanded.has(o)) { expanded.add(o); relayout = true; }
    if (relayout && chunkOf[i] >= 0) layoutChunk(chunks[chunkOf[i]]);
    centerOn(target(i), Math.max(view.k, 0.9));
    select(i);
    api.lastGoToAt = performance.now();
  }

  // ---- search -------------------------------------------------------------------------------
  const lower = NODES.map((n) => [n.n.toLowerCase(), n.o.toLowerCase()]);
  const tlower = TENSORS.map((t) => t.n.toLowerCase());
  let results = [], active = 0;
  function search(q) {
    q = q.trim().toLowerCase();
    const out = [];
    if (!q) return out;
    const LIMIT = 200;
    let total = 0;
    for (let i = 0; i < NODES.length; i++) {
      if (!inLayout(i)) continue;
      const [nm, op] = lower[i];
      if (op === q) { total++; if (out.length < LIMIT) out.push({ kind: 'op', node: i }); }
      else if (nm.includes(q)) { total++; if (out.length < LIMIT) out.push({ kind: 'node', node: i }); }
    }
    for (let t = 0; t < TENSORS.length; t++) {
      if (!tlower[t].includes(q)) continue;
      const n = producer[t] >= 0 ? producer[t] : consumers[t][0];
      if (n == null || n < 0 || !inLayout(n)) continue;
      total++;
      if (out.length < LIMIT) out.push({ kind: 'tensor', node: n, tensor: t });
    }
    out.sort((a, b) => (b.kind === 'node' && lower[b.node][0] === q) - (a.kind === 'node' && lower[a.node][0] === q));
    out.total = total;
    return out;
  }
  function showResults(q) {
    const t0 = performance.now();
    results = search(q);
    active = 0;
    const box = $('results');
    found.forEach((i) => { found.delete(i); if (nodeEls.has(i)) decorate(nodeEls.get(i), i); });
    if (!q.trim()) { box.hidden = true; $('search-count').textContent = ''; return; }
    results.forEach((r) => { found.add(r.node); if (nodeEls.has(r.node)) decorate(nodeEls.get(r.node), r.node); });
    box.innerHTML = results.slice(0, 100).map((r, k) => {
      const n = NODES[r.node];
      const label = r.kind === 'tensor' ? `${esc(TENSORS[r.tensor].n)} <span class="kind">${esc(edgeLabel(r.tensor))} from ${esc(n.n || n.o)}</span>` : `${esc(n.n || '(unnamed)')} <span class="kind">${esc(n.o)}</span>`;
      return `<div class="result${k === 0 ? ' active' : ''}" data-k="${k}"><span class="kind">${r.kind}</span>${label}</div>`;
    }).join('') || '<div class="none">no match</div>';
    box.hidden = false;
    $('search-count').textContent = `${results.total || 0} found`;
    api.lastSearchMs = performance.now() - t0;
    api.lastSearchAt = performance.now();
  }
  const input = $('search');
  input.addEventListener('input', () => showResults(input.value));
  input.addEventListener('keydown', (e) => {
    const box = $('results');
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!results.length) return;
      active = (active + (e.key === 'ArrowDown' ? 1 : results.length - 1)) % Math.min(results.length, 100);
      box.querySelectorAll('.result').forEach((d, k) => d.classList.toggle('active', k === active));
    } else if (e.key === 'Enter' && results.length) { box.hidden = true; goTo(results[active].node); }
    else if (e.key === 'Escape') box.hidden = true;
  });
  $('results').addEventListener('click', (e) => {
    const d = e.target.closest('.result');
    if (!d) return;
    $('results').hidden = true;
    goTo(results[+d.dataset.k].node);
  });

  // ---- banners, legend, worst nodes -------------------------------------------------------------
  function banners() {
    const m = D.model;
    $('title').textContent = `${m.file} \u2014 ${m.node_count} nodes${m.node_count_with_subgraphs > m.node_count ? ' (+' + (m.node_count_with_subgraphs - m.node_count) + ' in subgraphs)' : ''}`;
    let b = '';
    if (typeof dagre === 'undefined' || !dagre) b += '<div class="banner-error">This page was built without its layout library (dagre); run scripts/install-deps.sh and rebuild onnxdbg.</div>';
    if (D.diff) {
      const d = D.diff;
      b += `<div class="banner-diff" id="diff-summary"><b>diff</b> ${esc(d.summary)} &nbsp; <span class="swatch" style="background:#ffd7d5"></span>only in ${esc(d.a)} (${d.only_in_a}) <span class="swatch" style="background:#d3f5d8"></span>only in ${esc(d.b)} (${d.only_in_b}) <span class="swatch" style="border:2px solid #bf8700"></span>\u0394 changed (${d.changed.length})${d.graph.length ? ' &nbsp; graph: ' + d.graph.slice(0, 5).map((g) => esc(g[0] + ': ' + g[1])).join('; ') : ''}${SIDE_G >= 0 ? ' <button id="diff-layout"></button>' : ''}</div>`;
    }
    if (HL) b += `<div class="banner-highlight" id="highlight-summary"><span class="swatch hl-swatch"></span><b>${esc(HL.title)}</b> (${HL.nodes.length}) ${esc(HL.summary)}</div>`;
    if (report) b += `<div class="banner-report" id="report-verdict"><b>${esc(report.verdict || 'run')}</b> ${esc(report.verdict_line || '')}</div>`;
    if (D.lint) {
      const c = D.lint.counts;
      b += `<div class="banner-lint" id="lint-summary"><b>lint</b> ${c.error} errors, ${c.warning} warnings, ${c.info} info${D.lint.model_findings.length ? ': ' + D.lint.model_findings.slice(0, 5).map((f) => esc(f[0] + ' ' + f[1] + ': ' + f[3])).join('; ') : ''}</div>`;
    }
    $('banners').innerHTML = b;
    if (SIDE_G >= 0) $('diff-layout').onclick = () => setLayout(layout === 'side' ? 'merged' : 'side');
    if (HL) {
      const shown = HL.nodes.slice(0, 500);
      $('highlight').innerHTML = `<h3>${esc(HL.title)} (${HL.nodes.length})</h3>${HL.summary ? '<p>' + esc(HL.summary) + '</p>' : ''}<ol id="highlight-list">${shown.map((i) => `<li>${nodeLink(i)}</li>`).join('')}</ol>${HL.nodes.length > shown.length ? '<p class="hint">and ' + (HL.nodes.length - shown.length) + ' more</p>' : ''}`;
    }
    if (report) {
      let l = `<h3>Error legend</h3><div class="scale"></div><div style="display:flex;justify-content:space-between;font-size:11px"><span>\u2264 atol</span><span>10\u00b2\u00d7</span><span>\u2265 10\u2074\u00d7 atol</span></div>`;
      l += `<div id="tolerance">atol ${fmt(report.atol)}, rtol ${fmt(report.rtol)}${report.error_stat ? ', ' + esc(report.error_stat) : ''}; colour = ${{own: 'own error of each node (isolated)', total: 'max abs error of each node\'s outputs (total, not isolated)', outputs: 'max abs error of the graph outputs'}[report.colour_basis] || 'max abs error'}</div>`;
      l += '<div><span class="swatch" style="background:#c77dde"></span>NaN or Inf</div>';
      // The node the result names, as the terminal prints it; never a guess.
      if (report.first) l += `<p id="first-divergent">First divergent node: ${report.first.index >= 0 ? nodeLink(report.first.index, report.first.label) : esc(report.first.label || report.first.node || '')}</p>`;
      else if (report.layerwise) l += '<p id="first-divergent">First divergent node: none</p>';
      $('legend').innerHTML = l;
      if (report.worst.length) {
        // Ranked as the terminal ranks them (own failures first); failing nodes only.
        $('worst').innerHTML = `<h3>Worst nodes</h3><table id="worst-table"><tr><th>node</th><th>op</th><th>error</th><th>error is</th><th>backend</th></tr>${report.worst.map((w) => `<tr><td>${nodeLink(w.index, w.label)}</td><td>${esc(NODES[w.index].o)}</td><td>${fmt(NODES[w.index].e ? NODES[w.index].e.err : null)}</td><td>${esc(w.source || '')}</td><td>${esc(w.backend)}</td></tr>`).join('')}</table>`;
      }
    }
  }

  // ---- diff layout: merged or side by side ------------------------------------------------------
  function drawHeads() {
    const heads = $('heads');
    heads.textContent = '';
    if (layout !== 'side') return;
    el('text', { class: 'colhead', x: -COLGAP, y: -8, 'text-anchor': 'end' }, heads).textContent = 'A: ' + DIFF.a;
    el('text', { class: 'colhead', x: COLGAP, y: -8 }, heads).textContent = 'B: ' + DIFF.b;
  }
  function showLayoutButton() {
    const b = $('diff-layout');
    if (b) b.textContent = layout === 'side' ? 'show merged' : 'show side by side';
    api.layout = layout;
  }
  // Rebuilds the chunks of the other layout; the selected node (or its match) stays in view.
  function setLayout(mode) {
    if (mode === layout || SIDE_G < 0) return;
    let keep = selected;
    layout = mode;
    if (keep >= 0 && !inLayout(keep)) keep = NODES[keep].p != null && inLayout(NODES[keep].p) ? NODES[keep].p : -1;
    for (const c of chunks) if (c.el) c.el.remove();
    chunkLayer.textContent = '';
    crossLayer.textContent = '';
    nodeEls.clear();
    expanded.clear();
    anchor = null;
    buildChunks();
    placeChunks();
    drawHeads();
    showLayoutButton();
    if (keep >= 0) goTo(keep); else fitWidth();
    update();
    startBackground();
  }

  // ---- start --------------------------------------------------------------------------------
  let backgroundRun = 0;  // a layout switch starts a new background pass and ends the old one
  function backgroundLayout(run) {
    if (run !== backgroundRun) return;
    const t0 = performance.now();
    let did = false;
    for (const c of chunks) {
      if (c.layout) continue;
      layoutChunk(c);
      did = true;
      if (performance.now() - t0 > 12) break;
    }
    if (did) { keepAnchor(); scheduleUpdate(); setTimeout(() => backgroundLayout(run), 0); }
    else { api.layoutDone = true; $('status').textContent = `${chunks.length} chunks laid out`; }
  }
  function startBackground() {
    api.layoutDone = false;
    const run = ++backgroundRun;
    setTimeout(() => backgroundLayout(run), 50);
  }
  window.addEventListener('error', (e) => api.errors.push(String(e.message)));
  banners();
  if (typeof dagre === 'undefined' || !dagre) return;
  buildChunks();
  placeChunks();
  drawHeads();
  showLayoutButton();
  if (firstNode >= 0) centerOn(firstNode, 1);
  else if (HL && HL.nodes.length) goTo(HL.nodes[0]);
  else fitWidth();
  update();
  api.firstRender = performance.now();
  api.ready = true;
  api.search = (q) => search(q).map((r) => r.node);
  api.goTo = goTo;
  api.nodeIndex = (name) => NODES.findIndex((n) => n.n === name);
  api.chunks = chunks.length;
  api.setLayout = setLayout;
  $('status').textContent = `drawn in ${Math.round(api.firstRender)} ms`;
  startBackground();
})();
