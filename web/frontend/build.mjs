// Bundles src/main.js (and the CSS it imports, with KaTeX's fonts) into web/static/dist.
// Nothing is fetched at run time: every font and script is served by the judge itself.
import { build } from "esbuild";
import { copyFile, mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "..", "static", "dist");

await build({
  entryPoints: { app: path.join(here, "src", "main.js") },
  outdir: dist,
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

// /docs (web/pages/apidocs.py) runs Swagger UI from these copies, not from a CDN: the page works
// offline and under the site's Content-Security-Policy.
const swagger = path.join(here, "node_modules", "swagger-ui-dist");
await mkdir(path.join(dist, "swagger"), { recursive: true });
for (const name of ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"]) {
  await copyFile(path.join(swagger, name), path.join(dist, "swagger", name));
}
