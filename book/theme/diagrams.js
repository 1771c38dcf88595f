// Draws the book's diagrams. The preprocessor (checker/src/commands/mdbook.rs)
// turns each ```mermaid listing into <figure class="diagram"> holding the
// diagram's source in <pre class="mermaid">; this script replaces that
// source with the SVG Mermaid draws, in the colours of the reader's theme,
// and draws again when the reader changes theme. When every figure of the
// page is drawn, <html data-diagrams="light|dark"> says so (the browser
// check, book/browser-check.mjs, waits for it).
(() => {
  const figures = [...document.querySelectorAll("figure.diagram")];
  if (figures.length === 0 || typeof mermaid === "undefined") return;
  const sources = figures.map((f) => f.querySelector("pre.mermaid").textContent);
  const DARK_THEMES = ["coal", "navy", "ayu"];
  const isDark = () => DARK_THEMES.some((t) => document.documentElement.classList.contains(t));
  let drawn = null;
  let count = 0;

  async function draw() {
    const look = isDark() ? "dark" : "light";
    if (look === drawn) return;
    drawn = look;
    mermaid.initialize({
      startOnLoad: false,
      securityLevel: "strict",
      theme: look === "dark" ? "dark" : "default",
      fontFamily: "inherit",
    });
    for (const [i, figure] of figures.entries()) {
      const { svg } = await mermaid.render(`diagram-${count++}`, sources[i]);
      let target = figure.querySelector(".diagram-svg");
      if (!target) {
        target = document.createElement("div");
        target.className = "diagram-svg";
        figure.querySelector("pre.mermaid").replaceWith(target);
      }
      target.innerHTML = svg;
    }
    document.documentElement.dataset.diagrams = look;
  }

  // One drawing at a time: a theme change while drawing waits its turn.
  let queue = Promise.resolve();
  const schedule = () => {
    queue = queue.then(draw).catch((e) => console.error("diagram:", e));
  };
  schedule();
  new MutationObserver(schedule).observe(document.documentElement, {
    attributes: true,
    attributeFilter: ["class"],
  });
})();
