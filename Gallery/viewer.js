// The viewer: a photo or video full window on dark, over the timeline; zoom by wheel, pinch
// or keys, swipes to the next, a live photo played on hover or hold, a slideshow, the info
// panel with rating, description and keywords, favourite and trash. Its `source` (the
// album page) answers for the neighbours and hears what changed.

import { api, runToEnd } from "./api.js";
import { markFavourite } from "./images.js";
import {
  DAYS, ICON, MONTHS, assetPageURL, assetURL, browserShows, bytesText, durationText, localDate,
  offsetText, programName,
} from "./words.js";

const SLIDE_MS = 4000;

function viewerBox() {
  const box = document.createElement("div");
  box.className = "lightbox";
  box.hidden = true;
  box.setAttribute("role", "dialog");
  box.setAttribute("aria-modal", "true");
  box.setAttribute("aria-label", "Photo viewer");
  box.innerHTML = [
    '<div class="stage"><img class="shown" alt="" draggable="false">',
    '<video class="clip" controls preload="metadata" hidden></video>',
    '<video class="live" muted playsinline preload="none" hidden></video>',
    '<p class="problem" hidden>This photo cannot be shown.</p></div>',
    '<div class="controls">',
    '<button type="button" data-v="close" aria-label="Close (Escape)">' + ICON("close") + '</button>',
    '<span class="name"></span><span class="spacer"></span>',
    '<button type="button" data-v="live" aria-pressed="false" hidden aria-label="Play the Live Photo (hold, or hover)">LIVE</button>',
    '<button type="button" data-v="favourite" aria-pressed="false" aria-label="Favourite">' + ICON("star") + '</button>',
    '<button type="button" data-v="info" aria-pressed="false" aria-label="Info (i)">' + ICON("info") + '</button>',
    '<button type="button" data-v="play" aria-pressed="false" aria-label="Slideshow (space)">' + ICON("play") + '</button>',
    '<button type="button" data-v="trash" aria-label="Move to the trash (Delete)">' + ICON("trash") + '</button>',
    '<a data-v="download" aria-label="Download the original" download>' + ICON("download") + '</a>',
    '<a data-v="edit">' + ICON("edit") + '<span>Edit</span></a></div>',
    '<button type="button" class="step prev" data-v="prev" aria-label="Previous (left arrow)">' + ICON("prev") + '</button>',
    '<button type="button" class="step next" data-v="next" aria-label="Next (right arrow)">' + ICON("next") + '</button>',
    '<aside class="info" aria-label="Info" hidden><h2>Info</h2>',
    '<form class="notes" aria-label="Rating, description and keywords">',
    '<div class="stars" role="group" aria-label="Rating">',
    [1, 2, 3, 4, 5].map((n) => '<button type="button" data-stars="' + n + '" aria-pressed="false" aria-label="' + n + ' of 5 stars">☆</button>').join(""),
    '</div>',
    '<label>Description <textarea name="caption" rows="2" placeholder="Add a description"></textarea></label>',
    '<label>Keywords <input name="keywords" placeholder="Add keywords, separated by commas" autocomplete="off"></label>',
    '<p class="notes-status" role="status" aria-live="polite"></p></form><dl></dl></aside>',
  ].join("");
  return box;
}

// The rendition that fills this screen.
function screenSize() {
  const need = Math.max(innerWidth, innerHeight) * (window.devicePixelRatio || 1);
  return [1024, 1600, 2048, 2560].find((size) => size >= need) || 2560;
}

export class Viewer {
  constructor() {
    this.box = viewerBox();
    document.body.append(this.box);
    const part = (selector) => this.box.querySelector(selector);
    this.stage = part(".stage");
    this.img = part(".shown");
    this.clip = part(".clip");
    this.live = part(".live");
    this.problem = part(".problem");
    this.info = part(".info");
    this.notes = part(".notes");
    this.notesStatus = part(".notes-status");
    this.current = null;
    this.source = null;
    this.returnFocus = null;
    this.zoom = { scale: 1, x: 0, y: 0 };
    this.sharp = false;
    this.playing = false;
    this.slideTimer = null;
    // A video as this browser plays it: the file itself where the browser plays HEVC
    // (Safari), else the server's playback version.
    this.playsHEVC = this.clip.canPlayType('video/mp4; codecs="hvc1.1.6.L93.B0"') !== "";
    this.wireZoom();
    this.wireNotes();
    this.wireLive();
    this.wireControls();
    this.wireKeys();
  }

  control(name) { return this.box.querySelector('[data-v="' + name + '"]'); }
  isOpen() { return !this.box.hidden; }
  // The address of a photo shown in the viewer, over the album it was opened from.
  address(asset) { return assetPageURL(asset.id, this.source.ref, "&view=1"); }

  // The server's playback version (H.264, the file itself when it is that already) at the
  // size the screen shows and the connection carries.
  playable(asset, rep) {
    if (this.playsHEVC) return assetURL(asset, rep);
    const long = Math.max(screen.width, screen.height) * (window.devicePixelRatio || 1);
    const slow = /(^|-)(2g|3g)$/.test(navigator.connection?.effectiveType || "");
    const delivery = slow ? "fast" : long >= 1600 ? "high" : "medium";
    return assetURL(asset, "playback") + "&delivery=" + delivery;
  }

  // ---- Zoom: wheel, double click, pinch, drag, keys --------------------------------------

  apply() {
    const { img, zoom } = this;
    img.style.transform = "translate(" + zoom.x + "px, " + zoom.y + "px) scale(" + zoom.scale + ")";
    this.box.classList.toggle("zoomed", zoom.scale > 1);
    // Past the screen's rendition, the photo's own pixels: the file when every browser
    // shows its format, else the largest rendition.
    const shownWidth = img.clientWidth * zoom.scale * (window.devicePixelRatio || 1);
    if (!this.sharp && this.current && img.naturalWidth && shownWidth > img.naturalWidth * 1.05) {
      this.sharp = true;
      const asset = this.current;
      const better = browserShows(asset.format) ? assetURL(asset, "full") : assetURL(asset, "fullscreen", 4096);
      const loading = new Image();
      loading.onload = () => {
        if (this.current !== asset) return;
        img.src = better;
        img.dataset.rep = browserShows(asset.format) ? "full" : "fullscreen-4096";
      };
      loading.src = better;
    }
  }
  zoomTo(scale, cx, cy) {
    const next = Math.min(8, Math.max(1, scale));
    if (next === 1) { this.zoom = { scale: 1, x: 0, y: 0 }; this.apply(); return; }
    const zoom = this.zoom;
    const rect = this.stage.getBoundingClientRect();
    const ox = rect.left + rect.width / 2, oy = rect.top + rect.height / 2;
    const k = next / zoom.scale;
    this.zoom = { scale: next, x: (cx - ox) - (cx - ox - zoom.x) * k, y: (cy - oy) - (cy - oy - zoom.y) * k };
    this.apply();
  }
  wireZoom() {
    const stage = this.stage;
    stage.addEventListener("wheel", (event) => {
      event.preventDefault();
      this.zoomTo(this.zoom.scale * Math.exp(-event.deltaY * 0.002), event.clientX, event.clientY);
    }, { passive: false });
    stage.addEventListener("dblclick", (event) => {
      this.zoomTo(this.zoom.scale > 1 ? 1 : 2.5, event.clientX, event.clientY);
    });
    // Pointers: one drags a zoomed photo or swipes to the next; two pinch.
    const pointers = new Map();
    let gesture = null;
    stage.addEventListener("pointerdown", (event) => {
      if (event.target === this.clip) return;
      stage.setPointerCapture(event.pointerId);
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      const list = [...pointers.values()];
      gesture = list.length === 2
        ? { pinch: Math.hypot(list[0].x - list[1].x, list[0].y - list[1].y), scale: this.zoom.scale }
        : { start: { x: event.clientX, y: event.clientY }, from: { x: this.zoom.x, y: this.zoom.y } };
    });
    stage.addEventListener("pointermove", (event) => {
      if (!pointers.has(event.pointerId) || !gesture) return;
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      const list = [...pointers.values()];
      if (gesture.pinch && list.length === 2) {
        const distance = Math.hypot(list[0].x - list[1].x, list[0].y - list[1].y);
        this.zoomTo(gesture.scale * distance / gesture.pinch, (list[0].x + list[1].x) / 2, (list[0].y + list[1].y) / 2);
      } else if (gesture.start && this.zoom.scale > 1) {
        this.zoom.x = gesture.from.x + event.clientX - gesture.start.x;
        this.zoom.y = gesture.from.y + event.clientY - gesture.start.y;
        this.apply();
      }
    });
    const lift = (event) => {
      if (!pointers.delete(event.pointerId)) return;
      if (gesture?.start && this.zoom.scale === 1 && pointers.size === 0) {
        const dx = event.clientX - gesture.start.x, dy = event.clientY - gesture.start.y;
        if (Math.abs(dx) > 60 && Math.abs(dy) < 80) this.step(dx < 0 ? 1 : -1);
        else if (dy > 120 && Math.abs(dx) < 80) this.close();
      }
      gesture = pointers.size ? gesture : null;
    };
    stage.addEventListener("pointerup", lift);
    stage.addEventListener("pointercancel", lift);
  }

  // ---- Info: rating, description and keywords (saved to the sidecar), and the facts -------

  showStars(asset) {
    const rating = asset.rating || 0;
    for (const star of this.notes.querySelectorAll("button[data-stars]")) {
      const on = Number(star.dataset.stars) <= rating;
      star.setAttribute("aria-pressed", on ? "true" : "false");
      star.textContent = on ? "★" : "☆";
    }
    this.notes.querySelector(".stars").setAttribute("aria-label", "Rating: " + (rating > 0 ? rating + " of 5 stars" : rating < 0 ? "rejected" : "none"));
  }
  // One change at a time, to the asset shown when it was made; the list keeps what the
  // catalog says after it.
  async saveNotes(change) {
    const asset = this.current;
    this.notesStatus.textContent = "Saving…";
    try {
      const changed = await (await api("PATCH", "/api/assets/" + asset.id + "/metadata", change)).json();
      for (const key of ["caption", "rating", "keywords"]) asset[key] = changed[key];
      if (this.current === asset) {
        this.showStars(asset);
        this.notesStatus.textContent = "Saved to " + asset.path.split("/").pop() + ".xmp";
      }
    } catch (error) {
      if (this.current === asset) this.notesStatus.textContent = error.message;
    }
  }
  wireNotes() {
    const notes = this.notes;
    notes.addEventListener("submit", (event) => event.preventDefault());
    notes.addEventListener("click", (event) => {
      const star = event.target.closest("button[data-stars]");
      if (!star || !this.current) return;
      const stars = Number(star.dataset.stars);
      this.saveNotes({ rating: (this.current.rating || 0) === stars ? 0 : stars });
    });
    notes.elements.caption.addEventListener("change", () => this.saveNotes({ caption: notes.elements.caption.value.trim() }));
    notes.elements.keywords.addEventListener("change", () => this.saveNotes({
      keywords: notes.elements.keywords.value.split(",").map((k) => k.trim()).filter(Boolean),
    }));
    // Enter in the description saves it (Shift+Enter: a new line).
    notes.elements.caption.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); event.target.blur(); }
    });
  }
  fillInfo(asset) {
    const list = this.info.querySelector("dl");
    list.textContent = "";
    const row = (term, value) => {
      if (value === undefined || value === null || value === "") return;
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      if (value instanceof Node) dd.append(value); else dd.textContent = value;
      list.append(dt, dd);
    };
    factRows(asset, row);
    // A photo's rating, description and keywords are edited above the list (written to its
    // sidecar, as `darkroom meta` writes them); a video's, and the trash's, only shown.
    const notes = this.notes;
    const editable = asset.mediaType !== "video" && !this.source.trash;
    notes.hidden = !editable;
    this.notesStatus.textContent = "";
    if (editable) {
      this.showStars(asset);
      notes.elements.caption.value = asset.caption || "";
      notes.elements.keywords.value = (asset.keywords || []).join(", ");
    } else {
      row("Description", asset.caption);
      if (asset.rating) row("Rating", asset.rating < 0 ? "Rejected" : "★".repeat(asset.rating) + "☆".repeat(5 - asset.rating));
      row("Keywords", (asset.keywords || []).join(", "));
    }
    row("People", (asset.people || []).join(", "));
    // An edit another program made (shown, as it would show it): one press shows the
    // photo's own pixels, another the edit again.
    const elsewhere = asset.foreignSettings;
    if (elsewhere && asset.mediaType !== "video") row("Edited in", this.originalToggle(asset, elsewhere));
  }
  originalToggle(asset, elsewhere) {
    const mark = document.createElement("span");
    mark.textContent = programName(elsewhere.program) + " (" + elsewhere.source + ") ";
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.className = "original";
    toggle.setAttribute("aria-pressed", "false");
    toggle.textContent = "Show original";
    toggle.addEventListener("click", () => {
      const on = toggle.getAttribute("aria-pressed") !== "true";
      toggle.setAttribute("aria-pressed", on ? "true" : "false");
      toggle.textContent = on ? "Show edit" : "Show original";
      this.sharp = true; // the screen's rendition of the one asked for, not the full one
      this.img.src = assetURL(asset, "fullscreen", screenSize()) + (on ? "&original=true" : "");
    });
    mark.append(toggle);
    return mark;
  }

  // ---- Showing an asset ------------------------------------------------------------------

  show(asset) {
    const { img, clip, live, problem } = this;
    this.current = asset;
    this.sharp = false;
    this.zoom = { scale: 1, x: 0, y: 0 };
    this.apply();
    // A damaged file: shown as far as it decodes, or (nothing decodes) its sentence alone.
    const blank = Boolean(asset.damage) && !asset.displayWidth;
    problem.textContent = blank ? asset.damage.problem + "." : "This photo cannot be shown.";
    problem.hidden = !blank;
    const video = asset.mediaType === "video" && !blank;
    clip.hidden = !video;
    img.hidden = video || blank;
    clip.pause();
    this.stopLive();
    live.removeAttribute("src");
    const motion = !video && !!(asset.motionVideo || asset.liveVideo);
    this.control("live").hidden = !motion;
    if (motion) live.src = this.playable(asset, "video");
    if (video) {
      clip.poster = assetURL(asset, "fullscreen", screenSize());
      clip.src = this.playable(asset, "full");
      img.removeAttribute("src");
    } else {
      clip.removeAttribute("poster");
      clip.removeAttribute("src");
      img.alt = asset.path + (asset.damage ? ": " + asset.damage.problem : "");
      img.dataset.rep = "fullscreen";
      if (blank) img.removeAttribute("src"); else img.src = assetURL(asset, "fullscreen", screenSize());
    }
    this.box.querySelector(".name").textContent = asset.path.split("/").pop();
    this.showFavourite(asset);
    // The file itself, not the edit another program made and this shows.
    this.control("download").href = assetURL(asset, "full") + (asset.foreignSettings ? "&original=true" : "");
    this.control("edit").href = assetPageURL(asset.id, this.source.ref, "&edit=1");
    // In the trash a photo is neither edited nor moved to the trash again; a damaged file
    // is not edited.
    this.control("trash").hidden = Boolean(this.source.trash);
    this.control("edit").hidden = Boolean(this.source.trash) || Boolean(asset.damage);
    this.fillInfo(asset);
    if (this.playing) this.nextSlide();
    // The neighbours, loaded before they are asked for.
    for (const direction of [-1, 1]) {
      this.source.neighbour(asset, direction).then((next) => {
        if (next && this.current === asset) new Image().src = assetURL(next, "fullscreen", screenSize());
      }).catch(() => {});
    }
  }

  // ---- A live or motion photo plays its video while the pointer is over the photo, a finger
  // holds it, or its LIVE button is pressed; then the still again, as Photos does.

  playLive() {
    const { img, live } = this;
    if (!this.current || !live.getAttribute("src") || this.zoom.scale !== 1 || !live.hidden) return;
    // In the photo's place and at its size (a phone's video is smaller than its still).
    live.style.width = img.clientWidth + "px";
    live.style.height = img.clientHeight + "px";
    live.hidden = false;
    img.hidden = true;
    this.control("live").setAttribute("aria-pressed", "true");
    live.currentTime = 0;
    live.play().catch(() => this.stopLive());
  }
  stopLive() {
    if (this.live.hidden) return;
    this.live.pause();
    this.live.hidden = true;
    this.img.hidden = false;
    this.control("live").setAttribute("aria-pressed", "false");
  }
  wireLive() {
    const { img, live, problem } = this;
    img.addEventListener("error", () => { if (img.getAttribute("src")) { problem.hidden = false; img.hidden = true; } });
    img.addEventListener("load", () => { img.hidden = false; problem.hidden = true; this.apply(); });
    live.addEventListener("ended", () => this.stopLive());
    live.addEventListener("error", () => this.stopLive());
    img.addEventListener("pointerenter", (event) => { if (event.pointerType === "mouse") this.playLive(); });
    live.addEventListener("pointerleave", (event) => { if (event.pointerType === "mouse") this.stopLive(); });
    // A finger held still for a moment (not a swipe to the next photo) plays it until lifted.
    let hold = null;
    img.addEventListener("pointerdown", (event) => {
      if (event.pointerType === "mouse") return;
      const at = { x: event.clientX, y: event.clientY };
      clearTimeout(hold?.timer);
      hold = { at, timer: setTimeout(() => this.playLive(), 250) };
    });
    for (const element of [img, live]) {
      element.addEventListener("pointermove", (event) => {
        if (hold && Math.hypot(event.clientX - hold.at.x, event.clientY - hold.at.y) > 10) clearTimeout(hold.timer);
      });
      for (const type of ["pointerup", "pointercancel"]) {
        element.addEventListener(type, (event) => {
          if (event.pointerType === "mouse") return;
          clearTimeout(hold?.timer);
          hold = null;
          this.stopLive();
        });
      }
    }
  }

  // ---- The slideshow: the next photo every few seconds, once the one shown has loaded (a
  // video: once it has played); it stops at the end, when the viewer closes, or when asked.

  play(on) {
    this.playing = on;
    clearTimeout(this.slideTimer);
    this.control("play").setAttribute("aria-pressed", on ? "true" : "false");
    this.control("play").innerHTML = ICON(on ? "pause" : "play");
    this.box.classList.toggle("playing", on);
    if (on) this.nextSlide();
  }
  nextSlide() {
    clearTimeout(this.slideTimer);
    if (!this.playing || this.box.hidden || !this.current) return;
    const { img, clip } = this;
    const asset = this.current;
    const video = asset.mediaType === "video" && !clip.hidden;
    const go = async () => {
      if (!this.playing || this.current !== asset) return;
      const next = await this.source.neighbour(asset, 1);
      if (!this.playing || this.current !== asset) return;
      if (!next) { this.play(false); return; }
      await this.step(1);
    };
    const later = () => { this.slideTimer = setTimeout(go, SLIDE_MS); };
    if (video) {
      clip.play().catch(() => {});
      clip.addEventListener("ended", go, { once: true });
    } else if (img.complete && img.naturalWidth) {
      later();
    } else {
      img.addEventListener("load", later, { once: true });
      img.addEventListener("error", later, { once: true });
    }
  }

  // ---- Moving, opening and closing -------------------------------------------------------

  // Another asset in this one's place, the address and the album told.
  moveTo(next) {
    this.show(next);
    history.replaceState({ viewer: next.id }, "", this.address(next));
    this.source.moved?.(next);
  }
  async step(direction) {
    if (!this.current) return;
    const next = await this.source.neighbour(this.current, direction);
    if (!next || this.box.hidden) return;
    this.moveTo(next);
  }
  // (`push`: false when the address is already the photo's, as after Forward.)
  open(asset, from, push = true) {
    this.source = from;
    this.returnFocus = document.activeElement;
    this.box.hidden = false;
    document.body.classList.add("viewing");
    this.show(asset);
    if (push) history.pushState({ viewer: asset.id }, "", this.address(asset));
    this.control("close").focus();
  }
  // Closed by Escape, the button or a swipe down: back to the album's address, the page
  // where it was.
  close() {
    if (this.box.hidden) return;
    if (history.state?.viewer) history.back(); else this.hide();
  }
  hide() {
    this.play(false);
    this.box.hidden = true;
    document.body.classList.remove("viewing");
    this.clip.pause();
    this.clip.removeAttribute("src");
    this.stopLive();
    this.live.removeAttribute("src");
    const asset = this.current;
    this.current = null;
    this.source?.closed?.(asset, this.returnFocus);
  }
  showFavourite(asset) {
    this.control("favourite").setAttribute("aria-pressed", asset.isFavourite ? "true" : "false");
  }
  toggleInfo() {
    this.info.hidden = !this.info.hidden;
    this.control("info").setAttribute("aria-pressed", this.info.hidden ? "false" : "true");
    this.box.classList.toggle("with-info", !this.info.hidden);
  }
  async favourite() {
    const asset = this.current;
    try {
      const changed = await (await api("PUT", "/api/assets/" + asset.id + "/favourite", { favourite: !asset.isFavourite })).json();
      asset.isFavourite = changed.isFavourite;
      if (this.current === asset) this.showFavourite(asset);
      const cell = document.querySelector('.cell[data-id="' + CSS.escape(asset.id) + '"]');
      if (cell) markFavourite(cell, asset.isFavourite);
    } catch (error) {
      this.control("favourite").title = error.message;
    }
  }
  // To the trash (a job of one, as the selection's are); the next photo (or the one before)
  // takes its place, and the album follows from the catalog's change.
  async trash() {
    const asset = this.current;
    const button = this.control("trash");
    if (!asset || this.source.trash || button.disabled) return;
    button.disabled = true;
    try {
      const next = (await this.source.neighbour(asset, 1)) || (await this.source.neighbour(asset, -1));
      await runToEnd({ action: "trash", ids: [asset.id] });
      button.title = "";
      this.source.removed?.(asset);
      if (this.current !== asset) return;
      if (next) this.moveTo(next); else this.close();
    } catch (error) {
      button.title = error.message;
      this.box.querySelector(".name").textContent = error.message;
    } finally {
      button.disabled = false;
    }
  }
  wireControls() {
    addEventListener("popstate", () => {
      if (!this.box.hidden && !history.state?.viewer) this.hide();
      // Forward to a photo the viewer showed: shown again (or, if the page no longer has
      // it, the address goes back to the album's).
      else if (this.box.hidden && history.state?.viewer && this.source) {
        if (this.source.reopen(history.state.viewer) === false) history.back();
      }
    });
    this.box.addEventListener("click", (event) => {
      const name = event.target.closest("[data-v]")?.dataset.v;
      if (name === "close") this.close();
      else if (name === "prev") this.step(-1);
      else if (name === "next") this.step(1);
      else if (name === "info") this.toggleInfo();
      else if (name === "favourite") this.favourite();
      else if (name === "trash") this.trash();
      else if (name === "live") { if (this.live.hidden) this.playLive(); else this.stopLive(); }
      else if (name === "play") this.play(!this.playing);
    });
  }
  wireKeys() {
    document.addEventListener("keydown", (event) => {
      if (this.box.hidden || event.target.closest("input, select, textarea")) return;
      const middle = (scale) => this.zoomTo(scale, innerWidth / 2, innerHeight / 2);
      if (event.key === "Escape") { event.preventDefault(); this.close(); }
      else if (event.key === "Delete") { event.preventDefault(); this.trash(); }
      else if (event.key === "ArrowLeft") { event.preventDefault(); this.step(-1); }
      else if (event.key === "ArrowRight") { event.preventDefault(); this.step(1); }
      else if (event.key === "i") this.toggleInfo();
      else if (event.key === " ") { event.preventDefault(); this.play(!this.playing); }
      else if (event.key === "+" || event.key === "=") middle(this.zoom.scale * 1.5);
      else if (event.key === "-") middle(this.zoom.scale / 1.5);
      else if (event.key === "0") this.zoomTo(1, 0, 0);
      else return;
      event.stopPropagation();
    }, true);
    // Focus stays in the viewer while it is open.
    this.box.addEventListener("keydown", (event) => {
      if (event.key !== "Tab") return;
      const stops = [...this.box.querySelectorAll("button, a[href], input, textarea, video:not([hidden])")].filter((e) => !e.hidden && e.offsetParent !== null);
      if (!stops.length) return;
      const first = stops[0], last = stops[stops.length - 1];
      if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus(); }
      else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus(); }
    });
  }
}

// The facts of an asset, a row each: when and where it was taken, with what, its size and
// file, any damage.
function factRows(asset, row) {
  const date = localDate(asset);
  const zone = asset.captureOffsetMinutes === undefined || asset.captureOffsetMinutes === null
    ? "" : " (" + offsetText(asset.captureOffsetMinutes) + (asset.timeZone ? ", " + asset.timeZone : "") + ")";
  row("Taken", DAYS[date.getUTCDay()] + " " + date.getUTCDate() + " " + MONTHS[date.getUTCMonth()] + " "
    + date.getUTCFullYear() + ", " + String(date.getUTCHours()).padStart(2, "0") + ":"
    + String(date.getUTCMinutes()).padStart(2, "0") + zone);
  if (asset.damage) row("Problem", asset.damage.problem + (asset.displayWidth ? ": shown as far as it can be read" : "") + " (" + asset.damage.detail + ")");
  row("Camera", asset.camera);
  row("Lens", asset.lens);
  const exposure = [];
  if (asset.exposureTime) exposure.push(asset.exposureTime < 1 ? "1/" + Math.round(1 / asset.exposureTime) + " s" : asset.exposureTime + " s");
  if (asset.fNumber) exposure.push("f/" + asset.fNumber);
  if (asset.iso) exposure.push("ISO " + asset.iso);
  if (asset.focalLength) exposure.push(asset.focalLength + " mm");
  row("Exposure", exposure.join(" · "));
  row("Size", asset.displayWidth ? asset.displayWidth + " × " + asset.displayHeight + " · "
    + (asset.displayWidth * asset.displayHeight / 1e6).toFixed(1) + " MP · " + bytesText(asset.byteSize)
    : bytesText(asset.byteSize));
  if (asset.duration) row("Length", durationText(asset.duration));
  row("File", asset.path);
  const place = [asset.place, asset.region, asset.country].filter(Boolean).join(", ");
  if (place || asset.latitude !== undefined && asset.latitude !== null) {
    const where = document.createElement("span");
    where.textContent = place ? place + " " : "";
    if (asset.latitude !== undefined && asset.latitude !== null) {
      const lat = asset.latitude.toFixed(5), lon = asset.longitude.toFixed(5);
      const link = document.createElement("a");
      link.href = "https://www.openstreetmap.org/?mlat=" + lat + "&mlon=" + lon + "#map=14/" + lat + "/" + lon;
      link.rel = "noopener noreferrer";
      link.textContent = lat + ", " + lon;
      where.append(link);
    }
    row("Place", where);
  }
}
