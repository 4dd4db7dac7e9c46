// Assembles the widget's site (make widget, scripts/build-widget.sh):
//   node scripts/site.mjs BINDGEN_DIR OUT_DIR
// BINDGEN_DIR holds wasm-bindgen's app.js and the optimised app_bg.wasm. Into OUT_DIR it writes:
//   1. assets/: the glue (minified), the wasm and the stylesheet (style/pickup.css) under
//      content-hashed names, which the server lets browsers keep for a year;
//   2. public/'s files, and index.html, with those names written into the stable loader pickup.js
//      (then minified) and into index.html's stylesheet and modulepreload links, which name unhashed
//      files in the sources;
//   3. pickup.css, a stable copy of the stylesheet for host pages that link it themselves;
//   4. a Brotli (quality 11) and a gzip (level 9) copy beside every compressible file, which the
//      server sends as they are to browsers that accept them.
// Any surprise (a file missing, a marked string not found or found twice) fails the build, rather
// than leaving a site whose loader names files that are not there.
import { readFileSync, writeFileSync, readdirSync, copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join, extname, relative } from "node:path";
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { brotliCompressSync, gzipSync, constants } from "node:zlib";

const [bindgen, dir] = process.argv.slice(2);
if (!bindgen || !dir) fail("usage: node scripts/site.mjs BINDGEN_DIR OUT_DIR");

function fail(why) {
  console.error(`site: ${why}`);
  process.exit(1);
}

// esbuild (make setup puts it on PATH): every embedding page loads this JavaScript. Its comments
// and long names were a fifth of it, gzipped.
function minified(js) {
  try {
    return execFileSync("esbuild", ["--minify", "--format=esm", "--loader=js", "--log-level=warning"], { input: js });
  } catch (e) {
    fail(`esbuild failed: ${e.message}`);
  }
}

// One script with the modules it imports (public/contract.js, loader.js, share.js, drawing.js,
// early.js), minified. The glue's dynamic import names a file
// that is not there yet, and is left as it is.
const BUNDLED_ONLY = ["home.js", "contract.js", "loader.js", "share.js", "drawing.js", "early.js"];
// Each bundle's metafile (what each module weighs in it) goes beside BINDGEN_DIR, for make bench's
// table of contributors (scripts/twiggy.sh); it is not part of the site.
const META = join(bindgen, "..", "esbuild");
mkdirSync(META, { recursive: true });
function bundled(entry, format) {
  const name = entry.split("/").pop();
  const outfile = join(META, name);
  try {
    execFileSync("esbuild", [entry, "--bundle", "--minify", `--format=${format}`, "--log-level=error", `--outfile=${outfile}`, `--metafile=${outfile}.json`]);
    return readFileSync(outfile);
  } catch (e) {
    fail(`esbuild failed on ${entry}: ${e.message}`);
  }
}

// 1. The hashed files. 16 hex digits of SHA-256: a new name whenever a byte changes.
const ASSETS = "assets";
mkdirSync(join(dir, ASSETS), { recursive: true });
function hashed(source, stem, suffix, transform = (body) => body) {
  let body;
  try {
    body = transform(readFileSync(source));
  } catch (e) {
    fail(`cannot read ${source}: ${e.message}`);
  }
  const name = `${ASSETS}/${stem}-${createHash("sha256").update(body).digest("hex").slice(0, 16)}${suffix}`;
  writeFileSync(join(dir, name), body);
  return { name, body };
}
const glue = hashed(join(bindgen, "app.js"), "app", ".js", minified).name;
const wasm = hashed(join(bindgen, "app_bg.wasm"), "app", "_bg.wasm").name;
const stylesheet = hashed("style/pickup.css", "pickup", ".css");
const css = stylesheet.name;
const integrity = `sha384-${createHash("sha384").update(stylesheet.body).digest("base64")}`;

for (const name of readdirSync("public")) copyFileSync(join("public", name), join(dir, name));
copyFileSync("index.html", join(dir, "index.html"));

// 2. Each marked string must be there exactly once, so a changed source fails loudly here.
function fill(file, replacements, transform = (text) => text) {
  const path = join(dir, file);
  let text = readFileSync(path, "utf8");
  for (const [from, to] of replacements) {
    const count = text.split(from).length - 1;
    if (count !== 1) fail(`${file}: expected ${JSON.stringify(from)} once, found it ${count} times`);
    text = text.replace(from, () => to); // a function: `$&` in `to` (minified code) is not a pattern
  }
  writeFileSync(path, transform(text));
}
fill("loader.js", [
  [`const GLUE = "./app.js";`, `const GLUE = "./${glue}";`],
  [`const WASM = "app_bg.wasm";`, `const WASM = "${wasm}";`],
  [`const CSS = "pickup.css";`, `const CSS = "${css}";`],
]);
// The loader, and the element's module on its own for hosts that define it themselves.
for (const entry of ["pickup.js", "pickup-element.js"]) writeFileSync(join(dir, entry), bundled(join(dir, entry), "esm"));
// The home page's inline script: the `</script>` that would end it early cannot be in it, since
// esbuild escapes it in strings.
const home = bundled(join(dir, "home.js"), "iife").toString().trim();
// Trunk's lines (make dev) are not the shipped site's.
const TRUNK_LINE = /^ *<link data-trunk [^>]*\/>\n/gm;
const TRUNK_NOTE = /^ *<!-- Trunk's \(make dev[^]*?-->\n/m;
fill("index.html", [], (text) => {
  const lines = text.match(TRUNK_LINE)?.length ?? 0;
  if (lines === 0 || !TRUNK_NOTE.test(text)) fail("index.html: expected Trunk's data-trunk lines and their note");
  return text.replace(TRUNK_NOTE, "").replace(TRUNK_LINE, "");
});
fill("index.html", [
  [`<link rel="stylesheet" href="/pickup.css" />`, `<link rel="stylesheet" href="/${css}" integrity="${integrity}" />`],
  [`<link rel="modulepreload" href="/app.js" />`, `<link rel="modulepreload" href="/${glue}" />`],
  [`<script type="module" async data-pickup-inline="home.js"></script>`, `<script type="module" async>${home}</script>`],
]);
// Bundled into the two above; not served on their own. The contract's names for the scripts
// (contract.json) are not the site's.
for (const part of [...BUNDLED_ONLY, "contract.json"]) rmSync(join(dir, part));

// 3. The stable stylesheet, for host pages that link it themselves.
copyFileSync(join(dir, css), join(dir, "pickup.css"));

// 4. Precompressed copies. A copy that would not be smaller is not written, so the server sends
// the file itself.
const COMPRESSIBLE = new Set([".js", ".wasm", ".css", ".html", ".svg", ".json", ".txt"]);
function* files(d) {
  for (const entry of readdirSync(d, { withFileTypes: true })) {
    const path = join(d, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}
let written = 0;
for (const path of [...files(dir)]) {
  if (!COMPRESSIBLE.has(extname(path))) continue;
  const body = readFileSync(path);
  const copies = {
    ".br": brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    ".gz": gzipSync(body, { level: 9 }),
  };
  for (const [ext, packed] of Object.entries(copies)) {
    if (packed.length < body.length) {
      writeFileSync(path + ext, packed);
      written++;
    }
  }
}
console.log(`site: ${glue}, ${wasm}, ${css}; ${written} precompressed copies in ${relative(process.cwd(), dir) || "."}`);
