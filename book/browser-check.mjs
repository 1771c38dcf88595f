// The built book, opened as a reader opens it: `make book-check` (part of
// `make test`) serves book/build/html on 127.0.0.1 and drives Debian's
// Chromium, headless, with Playwright. It fails when
//   - a page has a console error, an uncaught exception, or a request that
//     fails or answers 4xx/5xx (a missing asset);
//   - a Rust, C or TOML listing has no highlighted token;
//   - the search finds nothing for `CondVar`, `module_param` or a chapter
//     title;
//   - a link into the API reference (api/) does not resolve, or the
//     reference's own index page has a console error;
//   - a diagram (a ```mermaid listing, book/theme/diagrams.js) is not drawn
//     as an SVG with its title, in the light theme and again in a dark one,
//     or the book has fewer diagrams than MIN_DIAGRAMS.
// It saves a screenshot of one chapter in target/book-check/, and of each
// page's diagrams in both themes.
//
//   node book/browser-check.mjs [BOOK_DIR]     (default book/build/html)
import { createServer } from "node:http";
import { mkdir, readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve } from "node:path";
import { chromium } from "playwright-core";

const repo = resolve(new URL("..", import.meta.url).pathname);
const dir = resolve(process.argv[2] ?? join(repo, "book/build/html"));
const shots = join(repo, "target/book-check");
const SEARCHES = ["CondVar", "module_param"];
const SCREENSHOT = "sync-condvar.html";
const HIGHLIGHTED = ["language-rust", "language-c", "language-toml"];
const MIN_DIAGRAMS = 8;

// Every diagram of `page` drawn in `look` ("light" or "dark"): an SVG with
// a size, whose <title> is the figure's caption. Returns how many.
async function checkDiagrams(page, name, look) {
  const count = await page.$$eval("figure.diagram", (f) => f.length);
  if (count === 0) return 0;
  const drawn = await page
    .waitForFunction((l) => document.documentElement.dataset.diagrams === l, look, { timeout: 15000 })
    .then(() => true)
    .catch(() => false);
  if (!drawn) {
    fail(name, `diagrams not drawn in the ${look} theme`);
    return count;
  }
  const figures = await page.$$eval("figure.diagram", (fs) =>
    fs.map((f) => {
      const svg = f.querySelector(".diagram-svg svg");
      const box = svg?.getBoundingClientRect();
      return {
        caption: f.querySelector("figcaption")?.textContent ?? "",
        title: svg?.querySelector("title")?.textContent ?? "",
        width: box?.width ?? 0,
        height: box?.height ?? 0,
        error: (svg?.textContent ?? "").includes("Syntax error"),
      };
    }),
  );
  for (const f of figures) {
    if (f.width < 50 || f.height < 50 || f.error) fail(name, `diagram "${f.caption}" not drawn (${look})`);
    else if (f.title !== f.caption) fail(name, `diagram "${f.caption}" has no matching SVG title (${look})`);
  }
  await mkdir(shots, { recursive: true });
  const handles = await page.$$("figure.diagram");
  for (const [i, h] of handles.entries()) {
    await h.screenshot({ path: join(shots, `${name.replace(".html", "")}-diagram-${i + 1}-${look}.png`) });
  }
  return count;
}

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".eot": "application/vnd.ms-fontobject",
  ".txt": "text/plain",
};

// A static server for the book folder, on a free loopback port.
function serve(root) {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
    let file = join(root, path);
    try {
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

const server = await serve(dir);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  // What this machine's closed network and a root user need.
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

const failures = [];
const fail = (page, what) => failures.push(`${page}: ${what}`);

// Opens `url`, recording what went wrong while it loaded.
async function open(url) {
  const page = await browser.newPage();
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console error: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`uncaught exception: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));
  await page.goto(url, { waitUntil: "load" });
  await page.waitForLoadState("networkidle");
  return { page, problems };
}

// The chapters, as the sidebar lists them.
const { page: index, problems: indexProblems } = await open(base);
indexProblems.forEach((p) => fail("index.html", p));
const chapters = await index.$$eval(".sidebar a[href]", (as) =>
  [...new Set(as.map((a) => a.href))].filter((h) => h.endsWith(".html")),
);
if (chapters.length < 5) fail("index.html", `the sidebar lists only ${chapters.length} chapters`);

// Search, from the first page.
const title = await index.$eval(".sidebar a[href$='sync-condvar.html']", (a) =>
  a.textContent.replace(/^[\d.]+\s*/, "").trim(),
).catch(() => "Condition variables");
for (const query of [...SEARCHES, title]) {
  // As a reader does: open the search bar, type, read the results.
  await index.goto(base, { waitUntil: "networkidle" });
  await index.click("#search-toggle");
  await index.locator("#searchbar").pressSequentially(query, { timeout: 5000 });
  const hits = await index
    .waitForFunction(
      (q) => document.querySelector("#searchresults-header")?.textContent.includes(q),
      query,
      { timeout: 5000 },
    )
    .then(() => index.$$eval("#searchresults li", (li) => li.length))
    .catch(() => 0);
  if (hits === 0) fail("search", `nothing found for "${query}"`);
  else console.log(`ok    search "${query}": ${hits} results`);
}
await index.close();

const apiLinks = new Set();
let diagrams = 0;
for (const url of chapters) {
  const name = url.slice(base.length);
  const { page, problems } = await open(url);
  problems.forEach((p) => fail(name, p));
  const listings = await page.$$eval("pre > code", (codes, langs) =>
    codes
      .filter((c) => langs.some((l) => c.classList.contains(l)))
      .map((c) => ({ lang: [...c.classList].find((k) => k.startsWith("language-")),
                     tokens: c.querySelectorAll("span[class^='hljs-']").length,
                     start: c.textContent.trim().split("\n")[0].slice(0, 60) })),
    HIGHLIGHTED,
  );
  for (const l of listings.filter((l) => l.tokens === 0)) {
    fail(name, `${l.lang} listing not highlighted: ${l.start}`);
  }
  // Diagrams in the default (light) theme, then in a dark one, as the
  // theme menu switches it: the script draws them again.
  const pageDiagrams = await checkDiagrams(page, name, "light");
  if (pageDiagrams > 0) {
    await page.evaluate(() => {
      document.documentElement.classList.remove("light");
      document.documentElement.classList.add("navy");
    });
    await checkDiagrams(page, name, "dark");
    diagrams += pageDiagrams;
  }
  const links = await page.$$eval("a[href]", (as) => as.map((a) => a.href));
  const api = links.filter((h) => h.startsWith(`${base}api/`));
  api.forEach((h) => apiLinks.add(h.split("#")[0]));
  if (name === SCREENSHOT) {
    await mkdir(shots, { recursive: true });
    await page.screenshot({ path: join(shots, name.replace(".html", ".png")) });
  }
  console.log(`ok    ${name}: ${listings.length} listings highlighted, ${api.length} API links` +
              (pageDiagrams ? `, ${pageDiagrams} diagrams drawn in both themes` : "") +
              (problems.length ? ` (${problems.length} problems)` : ""));
  await page.close();
}

if (diagrams < MIN_DIAGRAMS) fail("book", `only ${diagrams} diagrams (at least ${MIN_DIAGRAMS})`);

// The API reference: every linked page exists, and its index page loads clean.
for (const href of apiLinks) {
  const res = await fetch(href);
  if (res.status !== 200) fail("api", `broken link ${href.slice(base.length)} (HTTP ${res.status})`);
}
const { page: api, problems: apiProblems } = await open(`${base}api/kernel/index.html`);
apiProblems.forEach((p) => fail("api/kernel/index.html", p));
if (!(await api.title()).includes("kernel")) fail("api/kernel/index.html", "no kernel crate page");
await api.close();
console.log(`ok    api: ${apiLinks.size} linked pages, api/kernel/index.html loads`);

await browser.close();
server.close();
for (const f of failures) console.log(`FAIL  ${f}`);
console.log(
  `book-check: ${chapters.length} pages, ${apiLinks.size} API pages: ` +
    (failures.length ? `${failures.length} problems` : "all good") +
    `; screenshot in ${join("target/book-check", SCREENSHOT.replace(".html", ".png"))}`,
);
process.exit(failures.length ? 1 : 0);
