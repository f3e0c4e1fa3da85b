// Drives real `onnxdbg view` pages in headless chromium: opens them, searches a node, clicks it,
// reads its attributes, checks the error colour of a --report overlay, diff marks in the merged
// and the side-by-side layout (and the button between them), highlighted nodes, expands an If
// subgraph, saves screenshots, and fails on any error the page logs.
// usage: node view_test.js OUT_DIR   (pages written by tests/cli/view.sh into OUT_DIR)
'use strict';
const fs = require('fs');
const path = require('path');
const { launch, open } = require('./browser');

const out = process.argv[2];
let failed = 0;
const check = (name, ok, extra) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${extra ? ': ' + extra : ''}`); if (!ok) failed = 1; };

async function searchAndOpen(page, query) {
  await page.fill('#search', query);
  await page.waitForSelector('#results .result', { timeout: 5000 });
  await page.press('#search', 'Enter');
  await page.waitForSelector('#detail-title', { timeout: 5000 });
}

async function main() {
  const b = await launch();
  if (b.skip) { console.log('SKIP: ' + b.skip); return 0; }
  const { browser, close } = b;
  try {
    // 1. The demo model with the report of a real `onnxdbg run --json` (opencv disagrees on Softmax).
    {
      const { page, problems } = await open(browser, path.join(out, 'demo_report.html'));
      await searchAndOpen(page, 'Constant');
      const attr = await page.$$eval('#details .attributes tr', (rows) => rows.map((r) => r.textContent));
      check('search "Constant", Enter: its attributes are shown', attr.some((t) => t.startsWith('value')), JSON.stringify(attr));
      // Click the Softmax node in the drawing itself.
      const softmax = page.locator('g.node', { has: page.locator('text.op', { hasText: /^Softmax$/ }) });
      await softmax.first().click();
      const title = await page.textContent('#detail-title');
      check('clicking the Softmax node shows its details', /Softmax/.test(title), title);
      const fill = await softmax.first().locator('rect.box').evaluate((r) => getComputedStyle(r).fill);
      const m = /rgb\((\d+), (\d+), (\d+)\)/.exec(fill);
      check('Softmax is coloured as failing (red)', m && +m[1] > 200 && +m[2] < 120, fill);
      const relu = page.locator('g.node', { has: page.locator('text.op', { hasText: /^Relu$/ }) });
      const reluFill = await relu.first().locator('rect.box').evaluate((r) => getComputedStyle(r).fill);
      check('Relu (agreeing) is green or uncoloured', !/rgb\(2[0-9]{2}, [0-9]{1,2}, /.test(reluFill), reluFill);
      const legend = await page.textContent('#legend');
      check('the legend shows the tolerance', /atol 1e-5,/.test(legend), legend.slice(0, 120));
      const worst = await page.$$eval('#worst-table a.link', (as) => as.map((a) => a.textContent));
      check('the worst-nodes table lists Softmax first', worst.length > 0, JSON.stringify(worst));
      const first = await page.$$('g.node.first');
      check('the first divergent node is highlighted', first.length === 1);
      await page.screenshot({ path: path.join(out, 'view_demo_report.png') });
      check('demo page logs no error', problems.length === 0, problems.join('; '));
      await page.close();
    }
    // 2. A diff: Softmax axis 0 against axis 1.
    {
      const { page, problems } = await open(browser, path.join(out, 'diff.html'));
      const summary = await page.textContent('#diff-summary');
      check('the diff summary is on top', summary.length > 10, summary.slice(0, 100));
      const marks = await page.$$('g.node.df-c .diff-mark');
      check('the changed Softmax carries a diff mark', marks.length === 1);
      await page.locator('g.node.df-c').first().click();
      const what = await page.textContent('#details');
      check('its details say what changed', /axis/.test(what), what.slice(0, 160));
      await searchAndOpen(page, 'Softmax');
      const attr = await page.$$eval('#details .attributes tr', (rows) => rows.map((r) => r.textContent));
      check('search "Softmax": attribute axis = 0', attr.some((t) => /^axis0/.test(t)), JSON.stringify(attr));
      await page.screenshot({ path: path.join(out, 'view_diff.png') });
      // The button switches to side by side: the changed Softmax is marked in both columns.
      await page.click('#diff-layout');
      await page.waitForFunction(() => window.onnxdbgViewer.layout === 'side');
      const sideMarks = await page.$$('g.node.df-c .diff-mark');
      check('side by side (button): the changed Softmax is marked in both models', sideMarks.length === 2, `${sideMarks.length} marks`);
      const heads = await page.$$eval('text.colhead', (t) => t.map((x) => x.textContent));
      check('side by side: each column is headed by its model', heads.length === 2 && heads[0] !== heads[1], JSON.stringify(heads));
      await page.click('#diff-layout');
      await page.waitForFunction(() => window.onnxdbgViewer.layout === 'merged');
      check('back to merged: one mark, no column heads', (await page.$$('g.node.df-c .diff-mark')).length === 1 && (await page.$$('text.colhead')).length === 0);
      check('diff page logs no error', problems.length === 0, problems.join('; '));
      await page.close();
    }
    // 2b. Side by side from the start (--diff-layout side): Softmax's axis changed, Neg only in A,
    // Abs only in B, each in its own colour and column.
    if (fs.existsSync(path.join(out, 'diff_side.html'))) {
      const { page, problems } = await open(browser, path.join(out, 'diff_side.html'));
      check('--diff-layout side opens side by side', await page.evaluate(() => window.onnxdbgViewer.layout) === 'side');
      const button = await page.textContent('#diff-layout');
      check('the layout button offers the merged view', /merged/.test(button), button);
      const marks = await page.$$('g.node.df-c .diff-mark');
      check('the changed Softmax is marked on both sides', marks.length === 2, `${marks.length} marks`);
      const onlyA = await page.$$eval('g.node.df-a:not(.side-b) text.op', (t) => t.map((x) => x.textContent));
      const onlyB = await page.$$eval('g.node.df-b.side-b text.op', (t) => t.map((x) => x.textContent));
      check('Neg is only in A (left), Abs only in B (right)', onlyA.join() === 'Neg' && onlyB.join() === 'Abs', `${onlyA} / ${onlyB}`);
      const fillA = await page.locator('g.node.df-a rect.box').first().evaluate((r) => getComputedStyle(r).fill);
      const fillB = await page.locator('g.node.df-b rect.box').first().evaluate((r) => getComputedStyle(r).fill);
      check('only-in-A and only-in-B nodes have their own colours', fillA !== fillB && fillA !== 'rgb(255, 255, 255)' && fillB !== 'rgb(255, 255, 255)', `${fillA} / ${fillB}`);
      const box = async (sel) => page.locator(sel).first().boundingBox();
      const negBox = await box('g.node.df-a'), absBox = await box('g.node.df-b.side-b');
      check('A is drawn left of B', negBox && absBox && negBox.x + negBox.width < absBox.x, JSON.stringify([negBox, absBox]));
      // The B side's changed Softmax links to its match in A.
      await page.locator('g.node.df-c.side-b').first().click();
      const details = await page.textContent('#details');
      check('B\'s Softmax: what changed and its match in A', /axis 0 -> 1/.test(details) && /matched in side_a\.onnx/.test(details), details.slice(0, 200));
      await page.click('#details p.pair a.link');
      const sel = await page.$$eval('g.node.selected', (g) => g.map((x) => x.getAttribute('class')));
      check('following the link selects A\'s Softmax', sel.length === 1 && !/side-b/.test(sel[0]), JSON.stringify(sel));
      const summary = await page.textContent('#diff-summary');
      check('the diff summary is on top', summary.length > 10, summary.slice(0, 100));
      await page.screenshot({ path: path.join(out, 'view_diff_side.png') });
      await page.click('#diff-layout');
      await page.waitForFunction(() => window.onnxdbgViewer.layout === 'merged');
      const merged = await page.$$eval('g.node.df-b', (g) => g.map((x) => x.getAttribute('class')));
      check('merged: Abs added to A\'s graph, no B column', merged.length === 1 && !/side-b/.test(merged[0]), JSON.stringify(merged));
      check('side-by-side page logs no error', problems.length === 0, problems.join('; '));
      await page.close();
    }
    // 2c. Highlighted nodes (--highlight-nodes "#2 Softmax,#1 Relu"), as `onnxdbg reduce` will.
    {
      const { page, problems } = await open(browser, path.join(out, 'highlight.html'));
      const hl = await page.$$eval('g.node.hl text.op', (t) => t.map((x) => x.textContent).sort());
      check('both highlighted nodes are drawn highlighted', hl.join() === 'Relu,Softmax', JSON.stringify(hl));
      const halo = await page.locator('g.node.hl rect.halo').first().evaluate((r) => getComputedStyle(r).stroke);
      check('with a violet halo', halo === 'rgb(130, 80, 223)', halo);
      check('other nodes are not', (await page.$$('g.node:not(.hl):not(.io) rect.halo')).length === 0);
      const title = await page.textContent('#detail-title');
      check('the page opens on the first highlighted node (#2 Softmax)', /^#2 Softmax/.test(title), title);
      const first = await page.locator('g.node.hl.selected').first().boundingBox();
      const vp = page.viewportSize();
      check('centred on it', first && Math.abs(first.x + first.width / 2 - (vp.width - 360) / 2) < 80, JSON.stringify(first));
      const list = await page.$$eval('#highlight-list a.link', (a) => a.map((x) => x.textContent));
      check('the side panel lists them in the order given, as node labels', list.join() === '#2 Softmax,#1 Relu', JSON.stringify(list));
      await page.locator('#highlight-list a.link').nth(1).click();
      const t2 = await page.textContent('#detail-title');
      check('a click on the list goes to the node', /^#1 Relu/.test(t2), t2);
      const banner = await page.textContent('#highlight-summary');
      check('title and summary on top', /highlighted nodes/.test(banner) && /2 nodes given/.test(banner), banner);
      await page.screenshot({ path: path.join(out, 'view_highlight.png') });
      check('highlight page logs no error', problems.length === 0, problems.join('; '));
      await page.close();
    }
    // 3. Names with <>&'" in them survive as text.
    {
      const { page, problems } = await open(browser, path.join(out, 'names.html'));
      const n = await page.evaluate(() => window.onnxdbgViewer.nodeIndex('<b>&\'"x</script>'));
      check('a node named <b>&\'"x</script> is found by its exact name', n >= 0);
      await page.evaluate((i) => window.onnxdbgViewer.goTo(i), n);
      const shown = await page.textContent('#details .detail-name');
      check('its name is shown as text, not markup', shown === '<b>&\'"x</script>', shown);
      check('no element was injected from a name', (await page.$$('body b')).length === 0);
      check('names page logs no error', problems.length === 0, problems.join('; '));
      await page.close();
    }
    // 4. Public models, when fetched: If subgraphs expand; PP-OCR stays interactive.
    if (fs.existsSync(path.join(out, 'silero_highlight.html'))) {
      const { page, problems } = await open(browser, path.join(out, 'silero_highlight.html'));
      const title = await page.textContent('#detail-title');
      check('silero: opens on the highlighted Reshape_512 inside the If', /Reshape_512/.test(title), title);
      const hl = await page.$$eval('g.node.hl text.op', (t) => t.map((x) => x.textContent).sort());
      check('silero: its If expanded, both highlighted nodes drawn', hl.join() === 'Equal,Reshape' && (await page.$$('.cluster')).length > 0, JSON.stringify(hl));
      await page.screenshot({ path: path.join(out, 'view_silero_highlight.png') });
      check('silero highlight page logs no error', problems.length === 0, problems.join('; '));
      await page.close();
    }
    for (const [file, shot] of [['silero.html', 'view_silero.png'], ['ppocr.html', 'view_ppocr_det.png']]) {
      if (!fs.existsSync(path.join(out, file))) { console.log(`skip ${file} (public models not fetched)`); continue; }
      const { page, problems, loadMs } = await open(browser, path.join(out, file));
      if (file === 'silero.html') {
        const before = await page.$$eval('g.node', (g) => g.length);
        await page.locator('g.toggle').first().click();
        await page.waitForFunction((b) => document.querySelectorAll('g.node').length > b, before, { timeout: 5000 });
        const after = await page.$$eval('g.node', (g) => g.length);
        check('expanding an If shows its subgraphs', after > before, `${before} -> ${after} nodes drawn`);
        await page.locator('.cluster').first().waitFor({ timeout: 3000 });
      } else {
        await searchAndOpen(page, 'Conv');
        const rows = await page.$$eval('#details .inputs tr', (r) => r.length);
        check('PP-OCR: a Conv has inputs with weight statistics', rows >= 2);
        const shapes = await page.$$eval('text.elabel', (t) => t.filter((x) => /float32 \[/.test(x.textContent)).length);
        check('PP-OCR: edges show dtype and inferred shape', shapes > 0, `${shapes} labelled edges`);
      }
      await page.screenshot({ path: path.join(out, shot) });
      check(`${file} opens (${loadMs} ms) and logs no error`, problems.length === 0, problems.join('; '));
      await page.close();
    }
  } finally {
    await close();
  }
  return failed;
}

main().then((rc) => process.exit(rc), (e) => { console.log('FAIL ' + (e && e.stack || e)); process.exit(1); });
