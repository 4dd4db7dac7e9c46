// Trunk's post_build hook (Trunk.toml); by hand, on Trunk's output: node scripts/finish-dist.mjs DIR.
// Finishes the widget's build in DIR (Trunk's staging dir when run as the hook):
//   1. finds the content-hashed glue, wasm and stylesheet Trunk wrote to DIR/assets/;
//   2. writes their names into the stable loader DIR/pickup.js and the preload links of
//      DIR/index.html, which name the unhashed files in the sources;
//   3. copies the stylesheet to DIR/pickup.css, the stable name host pages may link;
//   4. writes a Brotli (quality 11) and a gzip (level 9) copy beside every compressible file,
//      which the server sends as they are to browsers that accept them.
// Any surprise (a file missing, a name found twice, a marked string not found) fails the build,
// rather than leaving a site whose loader names files that are not there.
import { readFileSync, writeFileSync, readdirSync, copyFileSync, statSync, unlinkSync } from "node:fs";
import { join, extname, relative } from "node:path";
import { brotliCompressSync, gzipSync, constants } from "node:zlib";

const dir = process.argv[2] ?? process.env.TRUNK_STAGING_DIR;
if (!dir) fail("give the site directory as the argument (Trunk sets TRUNK_STAGING_DIR for its hook)");

function fail(why) {
  console.error(`finish-dist: ${why}`);
  process.exit(1);
}

// 1. The hashed files: exactly one of each.
const ASSETS = "assets";
const names = readdirSync(join(dir, ASSETS));
const one = (pattern, what) => {
  const found = names.filter((n) => pattern.test(n));
  if (found.length !== 1) {
    fail(`expected one ${what} in ${join(dir, ASSETS)} matching ${pattern}, found ${found.length ? found.join(", ") : "none"}`);
  }
  return `${ASSETS}/${found[0]}`;
};
const glue = one(/^app-[0-9a-f]+\.js$/, "glue script");
const wasm = one(/^app-[0-9a-f]+_bg\.wasm$/, "wasm module");
const css = one(/^pickup-[0-9a-f]+\.css$/, "stylesheet");

// 2. Each marked string must be there exactly once, so a changed source fails loudly here.
function fill(file, replacements) {
  const path = join(dir, file);
  let text = readFileSync(path, "utf8");
  for (const [from, to] of replacements) {
    const count = text.split(from).length - 1;
    if (count !== 1) fail(`${file}: expected ${JSON.stringify(from)} once, found it ${count} times`);
    text = text.replace(from, to);
  }
  writeFileSync(path, text);
}
fill("pickup.js", [
  [`from "./app.js";`, `from "./${glue}";`],
  [`const WASM = "app_bg.wasm";`, `const WASM = "${wasm}";`],
  [`const CSS = "pickup.css";`, `const CSS = "${css}";`],
]);
fill("index.html", [
  [`<link rel="modulepreload" href="/app.js" />`, `<link rel="modulepreload" href="/${glue}" />`],
  [`<link rel="preload" href="/app_bg.wasm"`, `<link rel="preload" href="/${wasm}"`],
]);

// 3. The stable stylesheet, for host pages that link it themselves.
copyFileSync(join(dir, css), join(dir, "pickup.css"));

// 4. Precompressed copies. An earlier copy is removed first; a copy that would not be smaller is
// not written, so the server sends the file itself.
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
    const target = path + ext;
    try {
      if (statSync(target).isFile()) unlinkSync(target);
    } catch {
      // No earlier copy.
    }
    if (packed.length < body.length) {
      writeFileSync(target, packed);
      written++;
    }
  }
}
console.log(`finish-dist: ${glue}, ${wasm}, ${css}; ${written} precompressed copies in ${relative(process.cwd(), dir) || "."}`);
