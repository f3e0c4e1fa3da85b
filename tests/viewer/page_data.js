// Reads the data an `onnxdbg view` page embeds (the JSON of viewer_data, documented in
// src/report/viewer.h) and prints JSON.stringify(EXPR), EXPR being JavaScript over that data `D`.
// usage: node page_data.js PAGE.html 'D.report.first.index'   (exit 1 when the page has no data)
'use strict';
const fs = require('fs');

const [file, expr] = process.argv.slice(2);
const html = fs.readFileSync(file, 'utf8');
const m = /<script type="application\/json" id="onnxdbg-data">([\s\S]*?)<\/script>/.exec(html);
if (!m) {
  console.error(`page_data: ${file} holds no onnxdbg-data block`);
  process.exit(1);
}
const D = JSON.parse(m[1]);
console.log(JSON.stringify(new Function('D', `return (${expr || 'D'});`)(D)));
