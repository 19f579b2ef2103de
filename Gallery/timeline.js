// The timeline: sections (a month each, or the whole album in its own order), laid out as
// justified rows; only the rows near the screen are in the page, and only about 5,000
// photos' details are kept. A scrubber of months beside it, the address kept at the month
// on the screen, and the geometry the keyboard and the viewer move by.

import { api } from "./api.js";
import { explainBroken, images, markFavourite, placeholderUnless } from "./images.js";
import { assetPageURL, assetURL, dayLabel, durationText, localSeconds, monthLabel } from "./words.js";

const GAP = 4, MONTH = 44, DAY = 30, AFTER = 12;
// A browser lays out at most about 33 million pixels (Chrome; Firefox 17 million), less
// than a million photos take: past LIMIT the page scrolls through LIMIT pixels and the plane
// moves by `scale` layout pixels for each of them, shifted under the screen as it scrolls;
// and the sections on it are placed from `base`, a round place near the screen, so that no
// element's own position passes the browser's limit either.
const LIMIT = 15e6;

// As the thumbnail shows it: an edit made elsewhere (a crop) has its own shape.
const aspect = (a) => {
  const [w, h] = a.shownWidth ? [a.shownWidth, a.shownHeight] : [a.displayWidth, a.displayHeight];
  return w > 0 && h > 0 ? Math.min(3, Math.max(0.5, w / h)) : 1;
};
const distance = (s, top, bottom) => s.top > bottom ? s.top - bottom : top - (s.top + s.height);

export class Timeline {
  // `page`: the album's page, which answers `paint(cell)` (the selection's mark), `held()`
  // (ids whose months are never forgotten), `viewerOpen()`, `counted(data)` (the timeline
  // read again) and `failed(error, again)` (a page of it could not be read).
  constructor(main, { ref, filters, byDate, page }) {
    Object.assign(this, { main, ref, filters, byDate, page });
    this.container = document.createElement("div");
    this.container.className = "timeline";
    this.container.setAttribute("role", "grid");
    this.container.setAttribute("aria-label", "Photos");
    this.container.setAttribute("aria-multiselectable", "true");
    this.plane = document.createElement("div");
    this.plane.className = "plane";
    this.container.append(this.plane);
    main.querySelector(".grid").replaceWith(this.container);
    main.querySelector(".more")?.remove();
    this.scrubber = document.createElement("nav");
    this.scrubber.className = "scrubber";
    this.scrubber.setAttribute("aria-label", "Months");
    if (byDate) main.append(this.scrubber);
    this.sections = [];
    this.width = 0;
    this.rowHeight = 180;
    this.version = 0;
    this.shown = new Map(); // section key -> { element, version, rows: Map(index -> element) }
    this.active = null; // the id of the cell that takes the keyboard's focus
    this.scale = 1;
    this.shifted = 0;
    this.base = 0;
    this.scheduled = false;
    this.lastAt = null;
    this.round = 0;
    images.idle = () => this.schedule();
    addEventListener("scroll", () => { if (this.scale !== 1) this.shift(); this.schedule(); }, { passive: true });
    addEventListener("resize", () => this.schedule());
    this.wireScrubber();
  }

  containerTop() { return this.container.getBoundingClientRect().top + scrollY; }
  // Where the screen's top is on the plane, and a scroll that puts a place of the plane there.
  planeY(p = scrollY - this.containerTop()) { return p > 0 ? p * this.scale : p; }
  scrollToPlane(y) { scrollTo(0, this.containerTop() + (y > 0 ? y / this.scale : y)); }
  shift() {
    const p = scrollY - this.containerTop();
    const rebase = this.scale === 1 ? 0 : Math.max(0, Math.floor(this.planeY(p) / 4e6) * 4e6);
    if (rebase !== this.base) {
      this.base = rebase;
      for (const s of this.sections) {
        const entry = this.shown.get(s.key);
        if (entry) entry.element.style.top = s.top - this.base + "px";
      }
    }
    const by = p > 0 && this.scale !== 1 ? p - p * this.scale + this.base : 0;
    if (by === this.shifted) return;
    this.shifted = by;
    this.plane.style.transform = by ? "translateY(" + by + "px)" : "";
  }

  // ---- Layout ----------------------------------------------------------------------------

  measure() {
    this.width = this.container.clientWidth;
    this.rowHeight = innerWidth < 700 ? 112 : 184;
  }
  estimate(count) {
    const perRow = Math.max(1, (this.width + GAP) / (this.rowHeight * 1.35 + GAP));
    return Math.ceil(count / perRow) * (this.rowHeight + GAP + (this.byDate ? DAY / 2 : 0));
  }
  // Justified rows: each photo keeps its shape, a row fills the width at about the target
  // height. A new day starts a new row when the row is nearly full (it is stretched to the
  // width), else it goes on in the same row under its own label.
  layout(s) {
    const { width, rowHeight } = this;
    const blocks = [];
    let y = s.label ? MONTH : 0, row = [], labels = [], sum = 0, day = null;
    const flush = (last) => {
      if (!row.length) return;
      const space = width - GAP * (row.length - 1);
      const height = last ? Math.min(rowHeight, space / sum) : space / sum;
      let x = 0;
      const items = row.map((i) => {
        const w = aspect(s.assets[i]) * height;
        const item = { i, left: x, width: w };
        x += w + GAP;
        return item;
      });
      const band = labels.length ? DAY : 0;
      const placed = labels.map((label, n) => {
        const at = items[row.indexOf(label.i)];
        const next = labels[n + 1] ? items[row.indexOf(labels[n + 1].i)].left : width;
        return { text: label.text, left: at.left, width: next - at.left - GAP };
      });
      blocks.push({ top: y, band, height, items, labels: placed });
      y += band + height + GAP;
      row = []; labels = []; sum = 0;
    };
    s.assets.forEach((asset, i) => {
      if (this.byDate) {
        const its = Math.floor(localSeconds(asset) / 86400);
        if (its !== day) {
          if (sum * rowHeight + GAP * row.length >= width * 0.8) flush(false);
          day = its;
          labels.push({ i, text: dayLabel(asset) });
        }
      }
      row.push(i);
      sum += aspect(asset);
      if (sum * rowHeight + GAP * (row.length - 1) >= width) flush(false);
    });
    flush(true);
    s.loaded = y;
    s.blocks = blocks;
    s.height = y + this.estimate(Math.max(0, s.count - s.assets.length)) + AFTER;
    s.version = ++this.version;
  }
  estimateSection(s) {
    s.blocks = [];
    s.loaded = s.label ? MONTH : 0;
    s.height = s.loaded + this.estimate(s.count) + AFTER;
    s.version = ++this.version;
  }
  place() {
    let y = 0;
    for (const s of this.sections) { s.top = y; y += s.height; }
    const high = Math.max(innerHeight, 1);
    this.scale = y > LIMIT ? (y - high) / (LIMIT - high) : 1;
    this.container.style.height = Math.min(y, LIMIT) + "px";
    this.shift();
    this.placeScrubber(y);
  }
  // Where the screen's top is: the section there and how far into it. Kept as sections
  // above it change height, so nothing moves under the reader's eyes.
  anchor() {
    const y = this.planeY();
    if (y <= 0) return null;
    // (Half a pixel of slack: a jump lands on a section's first pixel, give or take rounding.)
    const s = this.sections.find((s) => s.top + s.height > y + 0.5);
    return s ? { s, offset: y - s.top } : null;
  }
  keep(mark) {
    if (!mark || !this.sections.includes(mark.s)) return;
    const want = mark.s.top + mark.offset;
    if (Math.abs(want - this.planeY()) >= 1) this.scrollToPlane(want);
  }
  relayout(changed) {
    const mark = this.anchor();
    for (const s of changed) this.layout(s);
    this.place();
    this.keep(mark);
    this.schedule();
  }

  // ---- Reading ---------------------------------------------------------------------------

  makeSection(key, count) {
    const s = { key, label: this.byDate ? monthLabel(key) : "", count, assets: [], next: null, done: false, pending: null, reload: false };
    this.estimateSection(s);
    return s;
  }
  query(more) { return new URLSearchParams(Object.assign({ album: this.ref }, this.filters, more)); }
  // The months again (after a job, an upload, the change feed): a section is read again
  // only when its count changed or it holds an asset that changed (`changed`: ids; null:
  // every loaded section); until then it stays on the screen as it was.
  async reload(changed = null) {
    const round = ++this.round;
    const data = await (await api("GET", "/api/timeline?" + this.query())).json();
    if (round !== this.round) return; // a later call's answer is the one that counts
    const old = new Map(this.sections.map((s) => [s.key, s]));
    const mark = this.anchor();
    const list = this.byDate ? data.months : [{ month: "all", count: data.count }];
    this.sections = list.filter((m) => m.count > 0).map((m) => {
      const s = old.get(m.month);
      if (!s) return this.makeSection(m.month, m.count);
      const touched = changed === null || s.count !== m.count || s.assets.some((a) => changed.has(a.id));
      s.count = m.count;
      if (touched && s.assets.length) {
        s.reload = true;
        s.round = (s.round || 0) + 1;
      } else if (!s.assets.length) {
        this.estimateSection(s);
      }
      return s;
    });
    for (const [key, entry] of this.shown) {
      if (!this.sections.some((s) => s.key === key)) this.drop(key, entry);
    }
    for (const s of this.sections) if (s.assets.length) this.layout(s);
    this.place();
    this.keep(mark);
    this.page.counted(data);
    this.schedule();
  }
  // The next page of a section (or, to be read again, as many as it showed, from its
  // start); a call while one is under way waits for that one.
  load(s) {
    if (s.pending) return s.pending;
    s.pending = (async () => {
      const fresh = s.reload, round = s.round;
      try {
        const more = { limit: String(fresh ? Math.min(1000, Math.max(500, s.assets.length)) : 500) };
        if (this.byDate) more.month = s.key;
        if (s.next && !fresh) more.after = s.next;
        const page = await (await api("GET", "/api/assets?" + this.query(more))).json();
        if (!this.sections.includes(s)) return;
        if (fresh) {
          s.assets = page.assets;
          // Asked again meanwhile: read again once more.
          if (s.round === round) s.reload = false;
        } else {
          s.assets.push(...page.assets);
        }
        s.next = page.next || null;
        s.done = !page.next;
        if (s.done) s.count = s.assets.length;
        this.page.loaded();
        this.relayout([s]);
      } catch (error) {
        s.failed = true;
        this.page.failed(error, () => {
          for (const each of this.sections) each.failed = false;
          this.schedule();
        });
      } finally {
        s.pending = null;
      }
    })();
    return s.pending;
  }
  // A section read to its end (a step back into a month lands on its last photo).
  async loadAll(s) {
    while (!s.done && !s.failed && this.sections.includes(s)) await this.load(s);
  }

  // ---- Drawing: what is within a screen of the viewport, nothing else ----------------------

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => this.render());
  }
  removeRow(row) {
    for (const img of row.querySelectorAll("img")) images.drop(img);
    row.remove();
  }
  removeRows(entry) {
    for (const row of entry.rows.values()) this.removeRow(row);
    entry.rows.clear();
  }
  drop(key, entry) {
    this.removeRows(entry);
    entry.element.remove();
    this.shown.delete(key);
  }
  render() {
    this.scheduled = false;
    // A cell with the keyboard's focus that is drawn again keeps it.
    const focused = document.activeElement?.classList?.contains("cell") ? document.activeElement.dataset.id : null;
    if (this.container.clientWidth !== this.width) {
      const mark = this.anchor();
      this.measure();
      for (const s of this.sections) s.assets.length ? this.layout(s) : this.estimateSection(s);
      this.place();
      this.keep(mark);
    }
    this.shift();
    const here = this.planeY();
    const top = here - innerHeight, bottom = here + 2 * innerHeight;
    const visible = new Set();
    const waiting = [];
    for (const s of this.sections) {
      if (s.top + s.height < top || s.top > bottom) continue;
      visible.add(s.key);
      if ((s.reload || !s.done) && !s.pending && !s.failed && (s.reload || s.top + s.loaded < bottom)) {
        // A section wholly above the screen waits for the thumbnails on it (asked for
        // below, as its rows are made): after a jump, the month above would otherwise be
        // read from its start, page after page, to reach its end just above, while the
        // photos the reader jumped to are still coming. (Within a pixel: a scroll lands on
        // whole pixels.)
        if (s.top + s.height <= here + 1) waiting.push(s); else this.load(s);
      }
      this.drawSection(s, top, bottom);
    }
    // Nor while a page of a month on the screen is still coming: its rows, and so its
    // thumbnails, are not there yet to be waited for.
    const reading = this.sections.some((s) => visible.has(s.key) && !waiting.includes(s) && s.pending);
    if (!images.busy() && !reading) waiting.forEach((s) => this.load(s));
    for (const [key, entry] of this.shown) if (!visible.has(key)) this.drop(key, entry);
    this.forget(top, bottom);
    this.roving();
    if (focused && !document.activeElement?.classList?.contains("cell")) {
      this.container.querySelector('.cell[data-id="' + focused + '"]')?.focus({ preventScroll: true });
    }
    this.position();
  }
  // A section's element, and its rows between `top` and `bottom` (made or removed).
  drawSection(s, top, bottom) {
    let entry = this.shown.get(s.key);
    if (!entry) {
      const element = document.createElement("div");
      element.className = "section";
      if (s.label) {
        const heading = document.createElement("h2");
        heading.textContent = s.label;
        element.append(heading);
      }
      entry = { element, version: s.version, rows: new Map() };
      this.shown.set(s.key, entry);
      this.plane.append(element);
    }
    entry.element.style.top = s.top - this.base + "px";
    entry.element.style.height = s.height + "px";
    if (entry.version !== s.version) { this.removeRows(entry); entry.version = s.version; }
    s.blocks.forEach((block, index) => {
      const near = s.top + block.top + block.band + block.height >= top && s.top + block.top <= bottom;
      const row = entry.rows.get(index);
      if (near && !row) {
        const made = this.makeRow(s, block);
        entry.rows.set(index, made);
        entry.element.append(made);
      } else if (!near && row) {
        this.removeRow(row);
        entry.rows.delete(index);
      }
    });
  }
  // The page keeps the assets of at most about 5,000 photos: past that, the sections
  // farthest from the screen forget theirs (keeping their height) and load them again when
  // they come back, so ten years scrolled hold no more memory than one.
  forget(top, bottom) {
    let loaded = 0;
    for (const s of this.sections) loaded += s.assets.length;
    this.main.dataset.loaded = String(loaded);
    if (loaded <= 5000) return;
    // Never the months of the photo the viewer or the keyboard is on, or of a range's start.
    const held = new Set([this.active, ...this.page.held()].filter(Boolean));
    const far = this.sections.filter((s) => s.assets.length && !s.pending && (s.top + s.height < top || s.top > bottom)
      && !s.assets.some((a) => held.has(a.id)))
      .sort((a, b) => distance(b, top, bottom) - distance(a, top, bottom));
    for (const s of far) {
      if (loaded <= 4000) break;
      loaded -= s.assets.length;
      s.assets = []; s.blocks = []; s.next = null; s.done = false; s.reload = false;
      s.loaded = s.label ? MONTH : 0;
      s.version = ++this.version;
    }
    this.main.dataset.loaded = String(loaded);
  }
  makeRow(s, block) {
    const row = document.createElement("div");
    row.className = "row";
    row.setAttribute("role", "row");
    row.style.top = block.top + "px";
    row.style.height = block.band + block.height + "px";
    for (const label of block.labels) {
      const text = document.createElement("span");
      text.className = "day";
      text.setAttribute("role", "rowheader");
      text.style.left = label.left + "px";
      text.style.maxWidth = label.width + "px";
      text.textContent = label.text;
      row.append(text);
    }
    for (const item of block.items) {
      const cell = this.makeCell(s, item, block.height);
      cell.style.top = block.band + "px";
      cell.style.height = block.height + "px";
      row.append(cell);
    }
    return row;
  }
  makeCell(s, item, height) {
    const asset = s.assets[item.i];
    const cell = document.createElement("div");
    cell.className = "cell";
    cell.setAttribute("role", "gridcell");
    cell.tabIndex = -1;
    cell.dataset.id = asset.id;
    cell.dataset.section = s.key;
    cell.dataset.index = String(item.i);
    cell.style.left = item.left + "px";
    cell.style.width = item.width + "px";
    const link = document.createElement("a");
    link.href = assetPageURL(asset.id, this.ref);
    link.tabIndex = -1;
    link.draggable = false;
    const name = asset.path.split("/").pop();
    const img = document.createElement("img");
    img.alt = asset.mediaType === "video" ? name + ": video, " + durationText(asset.duration) : name;
    img.draggable = false;
    img.decoding = "async";
    img.addEventListener("error", () => { if (img.getAttribute("src")) explainBroken(img); });
    const need = height * (window.devicePixelRatio || 1) * Math.max(1, aspect(asset));
    const size = [128, 256, 384, 512, 768, 1024].find((x) => x >= need) || 1024;
    if (asset.damage && !asset.displayWidth) {
      // Nothing of it decodes: a tile that says what is wrong, in words.
      const tile = document.createElement("span");
      tile.className = "broken";
      tile.setAttribute("role", "img");
      tile.setAttribute("aria-label", name + ": " + asset.damage.problem);
      tile.textContent = asset.damage.problem;
      tile.title = asset.damage.detail;
      link.append(tile);
    } else {
      images.want(img, assetURL(asset, "aspect-thumbnail", size));
      link.append(img);
    }
    badges(asset, cell, link, img, name);
    // (Not for one edited elsewhere: the camera's thumbnail is of the unedited photo.)
    if (asset.mediaType !== "video" && asset.exifThumbnail && !asset.foreignSettings) {
      placeholderUnless(img, asset, item.width, height);
    }
    const check = document.createElement("button");
    check.type = "button";
    check.className = "check";
    check.tabIndex = -1;
    check.setAttribute("aria-label", "Select " + name);
    check.textContent = "✓";
    cell.append(link, check);
    if (asset.isFavourite) markFavourite(cell, true);
    this.page.paint(cell);
    return cell;
  }

  // ---- Where the reader is: the address, the scrubber, a jump ------------------------------

  // The address says where the reader is (`at=2019-03`): a reload or Back lands there.
  position() {
    if (!this.byDate || this.page.viewerOpen()) return;
    const mark = this.anchor();
    const at = mark ? mark.s.key : null;
    if (at === this.lastAt) return;
    this.lastAt = at;
    const address = new URL(location.href);
    if (at) address.searchParams.set("at", at); else address.searchParams.delete("at");
    history.replaceState(history.state, "", address);
    for (const tick of this.scrubber.querySelectorAll("a[data-month]")) {
      tick.classList.toggle("here", tick.dataset.month === at);
    }
  }
  jump(key) {
    // The newest month at or before `key` (the oldest after it, sorted oldest first).
    const descending = this.filters.sort !== "date";
    const sections = this.sections;
    const s = sections.find((s) => descending ? s.key <= key : s.key >= key) || sections[sections.length - 1];
    if (!s) return;
    if (s === sections[0]) scrollTo(0, 0); else this.scrollToPlane(s.top);
    if (!s.done && !s.pending) this.load(s);
    this.schedule();
  }
  // The scrubber: a mark for each month, a label for each year; a press or a drag jumps.
  placeScrubber(height) {
    if (!this.byDate) return;
    const scrubber = this.scrubber;
    scrubber.textContent = "";
    const track = Math.max(1, scrubber.clientHeight || innerHeight - 80);
    const years = new Map(); // year -> { tick, top, count }
    for (const s of this.sections) {
      const top = s.top / Math.max(1, height) * track;
      const tick = document.createElement("a");
      tick.href = "/album?" + new URLSearchParams(Object.assign({ ref: this.ref }, this.filters, { at: s.key }));
      tick.dataset.month = s.key;
      tick.setAttribute("aria-label", s.label);
      tick.title = s.label + " · " + s.count;
      tick.style.top = top + "px";
      tick.tabIndex = -1;
      if (s.key === this.lastAt) tick.classList.add("here");
      scrubber.append(tick);
      const year = s.key.slice(0, 4);
      const entry = years.get(year);
      if (entry) entry.count += s.count; else years.set(year, { tick, top, count: s.count, year });
    }
    // A label for each year there is room for, the years with the most photos first.
    const placed = [];
    for (const entry of [...years.values()].sort((a, b) => b.count - a.count)) {
      if (placed.some((top) => Math.abs(top - entry.top) < 16)) continue;
      placed.push(entry.top);
      entry.tick.classList.add("year");
      entry.tick.removeAttribute("tabindex");
      entry.tick.textContent = entry.year === "0000" ? "?" : entry.year;
    }
  }
  wireScrubber() {
    const scrubber = this.scrubber;
    scrubber.addEventListener("click", (event) => {
      const tick = event.target.closest("a[data-month]");
      if (!tick) return;
      event.preventDefault();
      this.jump(tick.dataset.month);
    });
    let dragging = false;
    const scrubTo = (event) => {
      const rect = scrubber.getBoundingClientRect();
      const fraction = Math.min(1, Math.max(0, (event.clientY - rect.top) / rect.height));
      scrollTo(0, this.containerTop() + fraction * this.container.clientHeight);
    };
    scrubber.addEventListener("pointerdown", (event) => {
      if (event.target.closest("a")) return;
      dragging = true;
      scrubber.setPointerCapture(event.pointerId);
      scrubTo(event);
    });
    scrubber.addEventListener("pointermove", (event) => { if (dragging) scrubTo(event); });
    scrubber.addEventListener("pointerup", () => { dragging = false; });
  }

  // ---- Positions: a cell's section and index; the neighbours of an asset, loading as needed

  locate(id) {
    for (const s of this.sections) {
      const i = s.assets.findIndex((a) => a.id === id);
      if (i >= 0) return { s, i };
    }
    return null;
  }
  asset(id) {
    const at = this.locate(id);
    return at ? at.s.assets[at.i] : null;
  }
  async neighbour(asset, direction) {
    const at = this.locate(asset.id);
    if (!at) return null;
    let { s, i } = at;
    i += direction;
    while (true) {
      if (i >= 0 && i < s.assets.length) return s.assets[i];
      if (direction > 0 && !s.done) {
        await this.load(s);
        if (i < s.assets.length) continue;
        if (!s.done) return null;
      }
      const next = this.sections[this.sections.indexOf(s) + direction];
      if (!next) return null;
      if (direction > 0 && !next.assets.length) await this.load(next);
      if (direction < 0) await this.loadAll(next);
      if (!next.assets.length) return null;
      s = next;
      i = direction > 0 ? 0 : s.assets.length - 1;
    }
  }
  // An asset brought onto the screen, its cell the keyboard's (and focused, if asked).
  bring(id, focus) {
    const at = this.locate(id);
    if (!at) return;
    const block = at.s.blocks.find((b) => b.items.some((item) => item.i === at.i));
    if (block) {
      const y = at.s.top + block.top, here = this.planeY();
      if (y < here + 60 || y + block.band + block.height > here + innerHeight) this.scrollToPlane(y - innerHeight / 3);
    }
    this.active = id;
    this.render();
    const cell = this.container.querySelector('.cell[data-id="' + id + '"]');
    if (focus && cell) cell.focus({ preventScroll: true });
  }
  // Tab comes into the grid at one cell: the keyboard's, else the first on the screen.
  roving() {
    const cells = this.container.querySelectorAll(".cell");
    let found = false;
    for (const cell of cells) {
      const on = cell.dataset.id === this.active;
      cell.tabIndex = on ? 0 : -1;
      found ||= on;
    }
    if (!found && cells.length) {
      const first = [...cells].find((cell) => cell.getBoundingClientRect().bottom > 0) || cells[0];
      first.tabIndex = 0;
    }
  }
  // The asset an arrow key moves to from `id`: left and right the neighbours; up and down
  // the row above or below (the next month's first, or the last month's last, read first),
  // the photo nearest in the middle.
  async move(id, key) {
    const at = this.locate(id);
    if (!at) return null;
    if (key === "ArrowLeft" || key === "ArrowRight") {
      return (await this.neighbour(at.s.assets[at.i], key === "ArrowRight" ? 1 : -1))?.id ?? null;
    }
    const blocks = at.s.blocks;
    const here = blocks.findIndex((b) => b.items.some((item) => item.i === at.i));
    const down = key === "ArrowDown";
    let s = at.s, target = blocks[here + (down ? 1 : -1)];
    if (!target) {
      s = this.sections[this.sections.indexOf(at.s) + (down ? 1 : -1)];
      if (!s) return null;
      if (down && !s.assets.length) await this.load(s);
      if (!down) await this.loadAll(s);
      target = down ? s.blocks[0] : s.blocks[s.blocks.length - 1];
      if (!target) return null;
    }
    const mine = blocks[here].items.find((item) => item.i === at.i);
    const middle = mine.left + mine.width / 2;
    let best = target.items[0];
    for (const item of target.items) {
      if (Math.abs(item.left + item.width / 2 - middle) < Math.abs(best.left + best.width / 2 - middle)) best = item;
    }
    return s.assets[best.i].id;
  }
  // Every asset whose cell a band from (left, top) to (right, bottom) on the plane crosses,
  // those off the screen too (the layout knows them).
  within(left, top, right, bottom) {
    const ids = [];
    for (const s of this.sections) {
      if (s.top + s.height < top || s.top > bottom) continue;
      for (const block of s.blocks) {
        const rowTop = s.top + block.top + block.band;
        if (rowTop + block.height < top || rowTop > bottom) continue;
        for (const item of block.items) {
          if (item.left + item.width >= left && item.left <= right) ids.push(s.assets[item.i].id);
        }
      }
    }
    return ids;
  }
}

// What a cell says besides its picture: damage, a video's length, a live photo.
function badges(asset, cell, link, img, name) {
  const badge = (className, text) => {
    const element = document.createElement("span");
    element.className = className;
    element.setAttribute("aria-hidden", "true");
    element.append(...text);
    link.append(element);
    return element;
  };
  if (asset.damage) {
    // Shown as far as it decodes (the top of a photo cut short), and marked.
    cell.classList.add("damaged");
    img.alt = name + ": " + asset.damage.problem;
    if (asset.displayWidth) {
      const why = document.createElement("span");
      why.className = "why";
      why.textContent = " " + asset.damage.problem;
      badge("damage-badge", ["⚠", why]).title = asset.damage.problem;
    }
  }
  if (asset.mediaType === "video" && !(asset.damage && !asset.displayWidth)) {
    // A video's poster is its representative frame; the badge says what it is and how long.
    badge("video-badge", ["▶ " + durationText(asset.duration)]);
  } else if (asset.motionVideo || asset.liveVideo) {
    // A live or motion photo: its still, marked; the viewer plays it.
    badge("video-badge live-badge", ["LIVE"]);
    img.alt = name + ": live photo";
  }
}
