// Bundles src/main.js (and the CSS it imports, with KaTeX's fonts) into web/static/dist.
// Nothing is fetched at run time: every font and script is served by the judge itself.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));

await build({
  entryPoints: { app: path.join(here, "src", "main.js") },
  outdir: path.join(here, "..", "static", "dist"),
  bundle: true,
  minify: true,
  sourcemap: true,
  format: "esm",
  target: ["es2020"],
  loader: { ".woff2": "file", ".woff": "file", ".ttf": "file" },
  // KaTeX lists woff2, woff and ttf for each face; browsers take the first they support.
  assetNames: "fonts/[name]-[hash]",
  logLevel: "warning",
});
