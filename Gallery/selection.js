// Selection on the timeline: "all" is a query less exceptions, never a list of every id.
// A click opens the viewer; the check mark (or a click while choosing, or with shift, ctrl
// or cmd) selects; a long press selects on a touch screen; a drag from outside a photo
// draws a band; the keyboard moves, opens and selects.

export class Selection {
  // `page`: the album's page, which answers `total()`, `open(id)`, `trash()` and
  // `viewerOpen()`.
  constructor(main, timeline, page) {
    Object.assign(this, { main, timeline, page });
    this.all = false;
    this.ids = new Set();
    this.except = new Set();
    this.anchor = null;
    this.toolbar = main.querySelector(".toolbar");
    this.countLabel = main.querySelector(".selection-count");
    this.wireClicks();
    this.wireBand();
    this.wireKeys();
  }

  has(id) { return this.all ? !this.except.has(id) : this.ids.has(id); }
  count() { return this.all ? this.page.total() - this.except.size : this.ids.size; }
  paint(cell) {
    const on = this.has(cell.dataset.id);
    cell.classList.toggle("selected", on);
    cell.setAttribute("aria-selected", on ? "true" : "false");
  }
  repaint() {
    for (const cell of this.timeline.container.querySelectorAll(".cell")) this.paint(cell);
    const count = this.count();
    this.countLabel.textContent = count + " selected";
    this.toolbar.hidden = count === 0;
    document.body.classList.toggle("selecting", count > 0);
  }
  set(id, on) {
    const list = this.all ? this.except : this.ids;
    if (on === !this.all) list.add(id); else list.delete(id);
  }
  clear() {
    this.all = false; this.ids.clear(); this.except.clear(); this.anchor = null;
    this.repaint();
  }
  selectAll() {
    this.all = true; this.ids.clear(); this.except.clear();
    this.repaint();
  }
  // What a job or an album change acts on: the ids, or the page's query less exceptions.
  target(ref, filters) {
    if (this.all) return { query: Object.assign({ album: ref }, filters), except: Array.from(this.except) };
    return { ids: Array.from(this.ids) };
  }
  async choose(id, range) {
    const timeline = this.timeline;
    const from = range && this.anchor ? timeline.locate(this.anchor) : null;
    if (from && timeline.locate(id)) {
      // Every photo from the range's start to here in the timeline's order, the months
      // between read first.
      const sections = timeline.sections;
      const a = sections.indexOf(from.s), b = sections.indexOf(timeline.locate(id).s);
      for (let si = Math.min(a, b); si <= Math.max(a, b); si++) await timeline.loadAll(sections[si]);
      const start = timeline.locate(this.anchor), end = timeline.locate(id);
      if (start && end) {
        const order = (p) => [sections.indexOf(p.s), p.i];
        let [x, y] = [order(start), order(end)];
        if (x[0] > y[0] || x[0] === y[0] && x[1] > y[1]) [x, y] = [y, x];
        for (let si = x[0]; si <= y[0]; si++) {
          const list = sections[si].assets;
          const first = si === x[0] ? x[1] : 0, last = si === y[0] ? y[1] : list.length - 1;
          for (let i = first; i <= last; i++) this.set(list[i].id, true);
        }
      }
    } else {
      this.set(id, !this.has(id));
      this.anchor = id;
    }
    this.repaint();
  }

  wireClicks() {
    const container = this.timeline.container;
    let pressed = null, longPressed = false;
    container.addEventListener("click", (event) => {
      const cell = event.target.closest(".cell");
      if (!cell) return;
      event.preventDefault();
      if (longPressed) { longPressed = false; return; }
      this.timeline.active = cell.dataset.id;
      if (event.target.closest(".check") || event.shiftKey || event.ctrlKey || event.metaKey || this.count() > 0) {
        this.choose(cell.dataset.id, event.shiftKey);
        return;
      }
      this.page.open(cell.dataset.id);
    });
    container.addEventListener("pointerdown", (event) => {
      const cell = event.target.closest(".cell");
      if (!cell || event.pointerType === "mouse") return;
      pressed = { x: event.clientX, y: event.clientY, timer: setTimeout(() => {
        longPressed = true;
        this.choose(cell.dataset.id, false);
      }, 500) };
    });
    const release = (event) => {
      if (!pressed) return;
      if (event.type !== "pointermove" || Math.hypot(event.clientX - pressed.x, event.clientY - pressed.y) > 10) {
        clearTimeout(pressed.timer);
        pressed = null;
      }
    };
    container.addEventListener("pointermove", release);
    container.addEventListener("pointerup", release);
    container.addEventListener("pointercancel", release);
    container.addEventListener("contextmenu", (event) => { if (event.target.closest(".cell") && event.pointerType !== "mouse") event.preventDefault(); });
  }
  // A drag that starts outside a photo (a label, a margin, the end of a row) draws a band;
  // every photo it crosses is selected.
  wireBand() {
    const { container, plane } = this.timeline;
    let band = null;
    const at = (event) => {
      const box = plane.getBoundingClientRect();
      return { x: event.clientX - box.left, y: event.clientY - box.top + this.timeline.base };
    };
    container.addEventListener("pointerdown", (event) => {
      if (event.pointerType !== "mouse" || event.button !== 0 || event.target.closest(".cell")) return;
      band = Object.assign(at(event), { element: null, moved: false });
      container.setPointerCapture(event.pointerId);
    });
    container.addEventListener("pointermove", (event) => {
      if (!band) return;
      const { x, y } = at(event);
      if (!band.moved && Math.hypot(x - band.x, y - band.y) < 6) return;
      band.moved = true;
      if (!band.element) {
        band.element = document.createElement("div");
        band.element.className = "band";
        plane.append(band.element);
      }
      const [left, right] = [Math.min(x, band.x), Math.max(x, band.x)];
      const [top, bottom] = [Math.min(y, band.y), Math.max(y, band.y)];
      const base = this.timeline.base;
      Object.assign(band.element.style, { left: left + "px", top: top - base + "px", width: right - left + "px", height: bottom - top + "px" });
      for (const id of this.timeline.within(left, top, right, bottom)) this.set(id, true);
      this.repaint();
    });
    const endBand = () => {
      if (!band) return;
      band.element?.remove();
      band = null;
    };
    container.addEventListener("pointerup", endBand);
    container.addEventListener("pointercancel", endBand);
  }
  // Arrows move; Enter opens; Space selects; Home and End go to the ends; Escape clears;
  // Delete moves the selection to the trash; Ctrl+A selects all.
  wireKeys() {
    const timeline = this.timeline;
    timeline.container.addEventListener("keydown", (event) => {
      const cell = event.target.closest(".cell");
      if (!cell) return;
      const id = cell.dataset.id;
      if (event.key.startsWith("Arrow")) {
        event.preventDefault();
        timeline.move(id, event.key).then(async (next) => {
          if (!next) return;
          if (event.shiftKey) await this.choose(next, true);
          timeline.bring(next, true);
        });
      } else if (event.key === "Enter") {
        event.preventDefault();
        this.page.open(id);
      } else if (event.key === " ") {
        event.preventDefault();
        this.choose(id, event.shiftKey);
      } else if (event.key === "Home" || event.key === "End") {
        event.preventDefault();
        const home = event.key === "Home";
        const s = home ? timeline.sections[0] : timeline.sections[timeline.sections.length - 1];
        if (!s) return;
        scrollTo(0, home ? 0 : document.body.scrollHeight);
        (s.assets.length ? Promise.resolve() : timeline.load(s)).then(() => {
          const asset = home ? s.assets[0] : s.assets[s.assets.length - 1];
          if (asset) timeline.bring(asset.id, true);
        });
      }
    });
    document.addEventListener("keydown", (event) => {
      if (this.page.viewerOpen() || event.target.closest("input, select, textarea, dialog")) return;
      if (event.key === "Escape") this.clear();
      if (event.key === "Delete" && this.count() > 0 && this.main.dataset.trash !== "true") {
        event.preventDefault();
        this.page.trash();
      }
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "a") { event.preventDefault(); this.selectAll(); }
    });
  }
}
