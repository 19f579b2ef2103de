// Darkroom's gallery: a timeline (months of justified rows, only the visible rows in the
// page), a viewer over it, selection with batch jobs, albums, upload, the editor and the
// duplicates page. Pages work without this file; it adds what needs a script. No inline
// script (strict CSP), no build step.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
  "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

// A picture the server could not make (a damaged file, a format it cannot read) becomes a
// tile that says so, instead of the browser's broken-image icon.
function showBroken(img) {
  if (!img.isConnected) return;
  const tile = document.createElement("span");
  tile.className = "broken";
  tile.setAttribute("role", "img");
  tile.setAttribute("aria-label", (img.alt ? img.alt + ": " : "") + "cannot be shown");
  tile.textContent = "Cannot be shown";
  tile.dataset.src = img.getAttribute("src") || "";
  img.replaceWith(tile);
}
// A thumbnail that did not come: asked once more for the server's words. A busy server
// (503) is asked again after the wait it names, up to five times; anything else becomes a
// tile that says what the server said ("damaged JPEG data", "not among the trusted formats").
function explainBroken(img) {
  const url = img.getAttribute("src");
  if (!url) return;
  fetch(url, { credentials: "same-origin" }).then(async (response) => {
    if (response.ok && (img.tries = (img.tries || 0) + 1) <= 5) { img.src = url; return; }
    if (response.status === 503 && (img.tries = (img.tries || 0) + 1) <= 5) {
      const wait = Math.min(10, Number(response.headers.get("Retry-After")) || 1);
      setTimeout(() => { if (img.isConnected) images.want(img, url); }, wait * 1000);
      return;
    }
    const error = (await response.json().catch(() => null))?.error;
    showBroken(img);
    const tile = document.querySelector('.broken[data-src="' + CSS.escape(url) + '"]');
    if (!error?.message || !tile) return;
    // A sentence for people ("This file is cut short"); the decoder's own words, which
    // start with the file's name, only on hover.
    const colon = error.message.indexOf(": ");
    tile.textContent = error.problem || "Cannot be shown: " + (colon > 0 ? error.message.slice(colon + 2) : error.message);
    tile.title = error.message;
  }).catch(() => showBroken(img));
}
function watchBroken(img) {
  img.addEventListener("error", () => { if (img.getAttribute("src")) showBroken(img); });
  // Failed before this script ran (it is deferred): a lazy image not yet asked for is not
  // complete, so only a real failure matches.
  if (img.complete && img.naturalWidth === 0 && img.getAttribute("src")) showBroken(img);
}

async function api(method, url, body) {
  const headers = { "X-CSRF-Token": csrf };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, {
      method, headers, credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (_) {
    const error = new Error("The server cannot be reached");
    error.offline = true;
    throw error;
  }
  if (!response.ok) {
    let message = response.status + " " + response.statusText;
    try { message = (await response.json()).error.message; } catch (_) { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

// Waits for a job to end (its event stream's "done"), calling `progress` on the way.
function followJob(job, progress) {
  return new Promise((resolve) => {
    const events = new EventSource("/api/jobs/" + job.id + "/events");
    events.addEventListener("progress", (event) => progress(JSON.parse(event.data).status));
    events.addEventListener("done", (event) => {
      events.close();
      resolve(JSON.parse(event.data));
    });
  });
}

// ---- Dates and words -------------------------------------------------------------------

// Seconds since 1970 on the clock where the photo was taken (its offset; none: as UTC).
const localSeconds = (asset) => asset.sortDate + (asset.captureOffsetMinutes || 0) * 60;
const localDate = (asset) => new Date(localSeconds(asset) * 1000);
function monthLabel(key) {
  if (key === "0000-00") return "Undated";
  const [year, month] = key.split("-").map(Number);
  return MONTHS[month - 1] + " " + year;
}
function dayLabel(asset) {
  const date = localDate(asset);
  return DAYS[date.getUTCDay()].slice(0, 3) + " " + date.getUTCDate() + " " + MONTHS[date.getUTCMonth()].slice(0, 3);
}
function offsetText(minutes) {
  const sign = minutes < 0 ? "−" : "+";
  const whole = Math.abs(minutes);
  return "UTC" + sign + String(Math.floor(whole / 60)).padStart(2, "0") + ":" + String(whole % 60).padStart(2, "0");
}
function bytesText(bytes) {
  if (bytes >= 1e9) return (bytes / 1e9).toFixed(1) + " GB";
  if (bytes >= 1e6) return (bytes / 1e6).toFixed(1) + " MB";
  return Math.max(1, Math.round(bytes / 1e3)) + " KB";
}
function durationText(seconds) {
  const whole = Math.round(seconds || 0);
  return Math.floor(whole / 60) + ":" + String(whole % 60).padStart(2, "0");
}
// Formats every browser shows as they are; anything else is asked for as a rendition.
// An icon of the page's set (icons.mustache), for a control that also says its name (its
// text, or its aria-label).
const ICON = (name) => '<svg class="icon" aria-hidden="true"><use href="#i-' + name + '"/></svg>';
function icon(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const use = document.createElementNS("http://www.w3.org/2000/svg", "use");
  use.setAttribute("href", "#i-" + name);
  svg.append(use);
  return svg;
}
// An asset's rendition: the version names its bytes; where the server signs addresses
// (serve --signed-renditions), the signature lets a front server or CDN answer it.
function assetURL(asset, rep, size) {
  const signature = asset.signed && asset.signed[rep];
  return "/api/assets/" + asset.id + "/" + rep + "?" + (size ? "size=" + size + "&" : "")
    + "v=" + asset.version + (signature ? "&e=" + asset.signed.expires + "&sig=" + signature : "");
}
const browserShows = (format) => ["jpeg", "png", "webp", "gif"].includes(format);

// ---- Images: four requests at once; those still waiting forgotten when their row leaves ---
// (A browser opens six connections to a server over HTTP/1.1: four for thumbnails leave two
// for the page's lists and the placeholders, which are answered at once.)

const images = {
  limit: 4, active: 0, queue: [],
  want(img, url) {
    img.dataset.want = url;
    this.queue.push(img);
    // After the caller has put the image in the page (one not in it is never loaded).
    if (!this.soon) this.soon = Promise.resolve().then(() => { this.soon = null; this.pump(); });
  },
  pump() {
    while (this.active < this.limit && this.queue.length) {
      // Those on the screen first: after a jump, rows laid out before the page settled, or
      // kept a screen away for a scroll, wait for the photos the reader is looking at.
      const first = this.queue.findIndex((each) => each.isConnected && each.dataset.want && onScreen(each));
      const img = this.queue.splice(Math.max(0, first), 1)[0];
      if (!img.isConnected || !img.dataset.want) continue;
      this.active += 1;
      img.dataset.loading = "true";
      const done = () => {
        if (!img.dataset.loading) return;
        delete img.dataset.loading;
        this.active -= 1;
        this.pump();
      };
      img.addEventListener("load", done, { once: true });
      img.addEventListener("error", done, { once: true });
      img.src = img.dataset.want;
    }
    if (this.idle && !this.busy()) this.idle();
  },
  // Whether thumbnails are still to come (what waits for them asks again at `idle`).
  busy() {
    return this.active > 0 || this.queue.some((img) => img.isConnected && img.dataset.want);
  },
  // An image leaving the page: a load still waiting is forgotten. One under way is left to
  // finish (its rendition is cached for the next time): cancelling it in the browser would
  // not stop the server's render, and the server would soon have more to make than this
  // page's four, and answer 503.
  drop(img) {
    delete img.dataset.want;
    const waiting = this.queue.indexOf(img);
    if (waiting >= 0) this.queue.splice(waiting, 1);
  },
};

// A thumbnail not there after a moment (not made yet: the server renders it now) is shown
// meanwhile by the small JPEG the camera embedded, read by the server without decoding
// anything; it goes when the real one has come. Turned as the photo is shown (EXIF
// orientation), which the embedded one does not say itself.
const TURNS = {
  2: "scaleX(-1)", 3: "rotate(180deg)", 4: "scaleY(-1)", 5: "scaleX(-1) rotate(90deg)",
  6: "rotate(90deg)", 7: "rotate(90deg) scaleX(-1)", 8: "rotate(-90deg)",
};
function onScreen(element) {
  const box = (element.closest(".cell") || element).getBoundingClientRect();
  return box.bottom > 0 && box.top < innerHeight;
}
function placeholderUnless(img, asset, width, height) {
  setTimeout(function check() {
    if (!img.isConnected || img.naturalWidth > 0) return;
    // Only on the screen: one a screen away is asked for when it comes, if still missing.
    if (!onScreen(img)) { setTimeout(check, 150); return; }
    const ph = document.createElement("img");
    ph.className = "placeholder";
    ph.alt = "";
    ph.setAttribute("aria-hidden", "true");
    ph.draggable = false;
    const turned = asset.orientation >= 5 && asset.orientation <= 8;
    ph.style.width = (turned ? height : width) + "px";
    ph.style.height = (turned ? width : height) + "px";
    ph.style.transform = "translate(-50%, -50%) " + (TURNS[asset.orientation] || "");
    ph.addEventListener("error", () => ph.remove());
    ph.src = "/api/assets/" + asset.id + "/exif-thumbnail?v=" + asset.version;
    img.classList.add("shown");
    img.before(ph);
    const gone = () => ph.remove();
    img.addEventListener("load", gone, { once: true });
    img.addEventListener("error", gone, { once: true });
  }, 150);
}

// ---- The viewer: full window on dark, over the timeline ---------------------------------

// The name people know a program that edited a photo by (`foreignSettings.program`).
const programName = (program) => program === "lightroom" ? "Lightroom" : program;

// A favourite's mark on its cell (a heart in the corner, and said in the picture's name),
// wherever the cell is: set when the cell is made and when the viewer changes it.
function markFavourite(cell, on) {
  const link = cell.querySelector("a");
  const img = cell.querySelector("img");
  let mark = cell.querySelector(".fav-badge");
  if (on && !mark) {
    mark = document.createElement("span");
    mark.className = "fav-badge";
    mark.setAttribute("aria-hidden", "true");
    mark.append(icon("star"));
    link.append(mark);
  } else if (!on && mark) {
    mark.remove();
  }
  if (img) img.alt = img.alt.replace(/, favourite$/, "") + (on ? ", favourite" : "");
}

function makeViewer() {
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
  document.body.append(box);
  const stage = box.querySelector(".stage");
  const img = box.querySelector(".shown");
  const clip = box.querySelector(".clip");
  const live = box.querySelector(".live");
  const problem = box.querySelector(".problem");
  const info = box.querySelector(".info");
  const control = (name) => box.querySelector('[data-v="' + name + '"]');
  let current = null, source = null, returnFocus = null, zoom = { scale: 1, x: 0, y: 0 }, sharp = false;

  const screenSize = () => {
    const need = Math.max(innerWidth, innerHeight) * (window.devicePixelRatio || 1);
    return [1024, 1600, 2048, 2560].find((size) => size >= need) || 2560;
  };
  // A video as this browser plays it: the file itself where the browser plays HEVC (Safari),
  // else the server's playback version (H.264, the file itself when it is that already), at
  // the size the screen shows and the connection carries.
  const playsHEVC = clip.canPlayType('video/mp4; codecs="hvc1.1.6.L93.B0"') !== "";
  function playable(asset, rep) {
    if (playsHEVC) return assetURL(asset, rep);
    const long = Math.max(screen.width, screen.height) * (window.devicePixelRatio || 1);
    const slow = /(^|-)(2g|3g)$/.test(navigator.connection?.effectiveType || "");
    const delivery = slow ? "fast" : long >= 1600 ? "high" : "medium";
    return assetURL(asset, "playback") + "&delivery=" + delivery;
  }

  function apply() {
    img.style.transform = "translate(" + zoom.x + "px, " + zoom.y + "px) scale(" + zoom.scale + ")";
    box.classList.toggle("zoomed", zoom.scale > 1);
    // Past the screen's rendition, the photo's own pixels: the file when every browser
    // shows its format, else the largest rendition.
    const shownWidth = img.clientWidth * zoom.scale * (window.devicePixelRatio || 1);
    if (!sharp && current && img.naturalWidth && shownWidth > img.naturalWidth * 1.05) {
      sharp = true;
      const asset = current;
      const better = browserShows(asset.format) ? assetURL(asset, "full") : assetURL(asset, "fullscreen", 4096);
      const loading = new Image();
      loading.onload = () => {
        if (current !== asset) return;
        img.src = better;
        img.dataset.rep = browserShows(asset.format) ? "full" : "fullscreen-4096";
      };
      loading.src = better;
    }
  }
  function zoomTo(scale, cx, cy) {
    const next = Math.min(8, Math.max(1, scale));
    if (next === 1) { zoom = { scale: 1, x: 0, y: 0 }; apply(); return; }
    const rect = stage.getBoundingClientRect();
    const ox = rect.left + rect.width / 2, oy = rect.top + rect.height / 2;
    const k = next / zoom.scale;
    zoom = { scale: next, x: (cx - ox) - (cx - ox - zoom.x) * k, y: (cy - oy) - (cy - oy - zoom.y) * k };
    apply();
  }
  stage.addEventListener("wheel", (event) => {
    event.preventDefault();
    zoomTo(zoom.scale * Math.exp(-event.deltaY * 0.002), event.clientX, event.clientY);
  }, { passive: false });
  stage.addEventListener("dblclick", (event) => {
    zoomTo(zoom.scale > 1 ? 1 : 2.5, event.clientX, event.clientY);
  });
  // Pointers: one drags a zoomed photo or swipes to the next; two pinch.
  const pointers = new Map();
  let gesture = null;
  stage.addEventListener("pointerdown", (event) => {
    if (event.target === clip) return;
    stage.setPointerCapture(event.pointerId);
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    const list = [...pointers.values()];
    gesture = list.length === 2
      ? { pinch: Math.hypot(list[0].x - list[1].x, list[0].y - list[1].y), scale: zoom.scale }
      : { start: { x: event.clientX, y: event.clientY }, from: { x: zoom.x, y: zoom.y } };
  });
  stage.addEventListener("pointermove", (event) => {
    if (!pointers.has(event.pointerId) || !gesture) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    const list = [...pointers.values()];
    if (gesture.pinch && list.length === 2) {
      const distance = Math.hypot(list[0].x - list[1].x, list[0].y - list[1].y);
      zoomTo(gesture.scale * distance / gesture.pinch, (list[0].x + list[1].x) / 2, (list[0].y + list[1].y) / 2);
    } else if (gesture.start && zoom.scale > 1) {
      zoom.x = gesture.from.x + event.clientX - gesture.start.x;
      zoom.y = gesture.from.y + event.clientY - gesture.start.y;
      apply();
    }
  });
  const lift = (event) => {
    if (!pointers.delete(event.pointerId)) return;
    if (gesture?.start && zoom.scale === 1 && pointers.size === 0) {
      const dx = event.clientX - gesture.start.x, dy = event.clientY - gesture.start.y;
      if (Math.abs(dx) > 60 && Math.abs(dy) < 80) step(dx < 0 ? 1 : -1);
      else if (dy > 120 && Math.abs(dx) < 80) close();
    }
    gesture = pointers.size ? gesture : null;
  };
  stage.addEventListener("pointerup", lift);
  stage.addEventListener("pointercancel", lift);

  const notes = info.querySelector(".notes");
  const notesStatus = info.querySelector(".notes-status");
  function showStars(asset) {
    const rating = asset.rating || 0;
    for (const star of notes.querySelectorAll("button[data-stars]")) {
      const on = Number(star.dataset.stars) <= rating;
      star.setAttribute("aria-pressed", on ? "true" : "false");
      star.textContent = on ? "★" : "☆";
    }
    notes.querySelector(".stars").setAttribute("aria-label", "Rating: " + (rating > 0 ? rating + " of 5 stars" : rating < 0 ? "rejected" : "none"));
  }
  // One change at a time, to the asset shown when it was made; the list keeps what the
  // catalog says after it.
  async function saveNotes(change) {
    const asset = current;
    notesStatus.textContent = "Saving…";
    try {
      const changed = await (await api("PATCH", "/api/assets/" + asset.id + "/metadata", change)).json();
      for (const key of ["caption", "rating", "keywords"]) asset[key] = changed[key];
      if (current === asset) {
        showStars(asset);
        notesStatus.textContent = "Saved to " + asset.path.split("/").pop() + ".xmp";
      }
    } catch (error) {
      if (current === asset) notesStatus.textContent = error.message;
    }
  }
  notes.addEventListener("submit", (event) => event.preventDefault());
  notes.addEventListener("click", (event) => {
    const star = event.target.closest("button[data-stars]");
    if (!star || !current) return;
    const stars = Number(star.dataset.stars);
    saveNotes({ rating: (current.rating || 0) === stars ? 0 : stars });
  });
  notes.elements.caption.addEventListener("change", () => saveNotes({ caption: notes.elements.caption.value.trim() }));
  notes.elements.keywords.addEventListener("change", () => saveNotes({
    keywords: notes.elements.keywords.value.split(",").map((k) => k.trim()).filter(Boolean),
  }));
  // Enter in the description saves it (Shift+Enter: a new line).
  notes.elements.caption.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); event.target.blur(); }
  });

  function fillInfo(asset) {
    const list = info.querySelector("dl");
    list.textContent = "";
    const row = (term, value) => {
      if (value === undefined || value === null || value === "") return;
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      if (value instanceof Node) dd.append(value); else dd.textContent = value;
      list.append(dt, dd);
    };
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
    // A photo's rating, description and keywords are edited above the list (written to its
    // sidecar, as `darkroom meta` writes them); a video's, and the trash's, only shown.
    const editable = asset.mediaType !== "video" && !source.trash;
    notes.hidden = !editable;
    notesStatus.textContent = "";
    if (editable) {
      showStars(asset);
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
    if (elsewhere && asset.mediaType !== "video") {
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
        sharp = true; // the screen's rendition of the one asked for, not the full one
        img.src = assetURL(asset, "fullscreen", screenSize()) + (on ? "&original=true" : "");
      });
      mark.append(toggle);
      row("Edited in", mark);
    }
  }

  function show(asset) {
    current = asset;
    sharp = false;
    zoom = { scale: 1, x: 0, y: 0 };
    apply();
    // A damaged file: shown as far as it decodes, or (nothing decodes) its sentence alone.
    const blank = Boolean(asset.damage) && !asset.displayWidth;
    problem.textContent = blank ? asset.damage.problem + "." : "This photo cannot be shown.";
    problem.hidden = !blank;
    const video = asset.mediaType === "video" && !blank;
    clip.hidden = !video;
    img.hidden = video || blank;
    clip.pause();
    stopLive();
    live.removeAttribute("src");
    const motion = !video && !!(asset.motionVideo || asset.liveVideo);
    control("live").hidden = !motion;
    if (motion) live.src = playable(asset, "video");
    if (video) {
      clip.poster = assetURL(asset, "fullscreen", screenSize());
      clip.src = playable(asset, "full");
      img.removeAttribute("src");
    } else {
      clip.removeAttribute("poster");
      clip.removeAttribute("src");
      img.alt = asset.path + (asset.damage ? ": " + asset.damage.problem : "");
      img.dataset.rep = "fullscreen";
      if (blank) img.removeAttribute("src"); else img.src = assetURL(asset, "fullscreen", screenSize());
    }
    box.querySelector(".name").textContent = asset.path.split("/").pop();
    showFavourite(asset);
    // The file itself, not the edit another program made and this shows.
    control("download").href = assetURL(asset, "full") + (asset.foreignSettings ? "&original=true" : "");
    control("edit").href = "/asset/" + asset.id + "?ref=" + encodeURIComponent(source.ref) + "&edit=1";
    // In the trash a photo is neither edited nor moved to the trash again; a damaged file
    // is not edited.
    control("trash").hidden = Boolean(source.trash);
    control("edit").hidden = Boolean(source.trash) || Boolean(asset.damage);
    fillInfo(asset);
    if (playing) nextSlide();
    // The neighbours, loaded before they are asked for.
    for (const direction of [-1, 1]) {
      source.neighbour(asset, direction).then((next) => {
        if (next && current === asset) new Image().src = assetURL(next, "fullscreen", screenSize());
      }).catch(() => {});
    }
  }
  img.addEventListener("error", () => { if (img.getAttribute("src")) { problem.hidden = false; img.hidden = true; } });
  // A live or motion photo plays its video while the pointer is over the photo, a finger
  // holds it, or its LIVE button is pressed; then the still again, as Photos does.
  function playLive() {
    if (!current || !live.getAttribute("src") || zoom.scale !== 1 || !live.hidden) return;
    // In the photo's place and at its size (a phone's video is smaller than its still).
    live.style.width = img.clientWidth + "px";
    live.style.height = img.clientHeight + "px";
    live.hidden = false;
    img.hidden = true;
    control("live").setAttribute("aria-pressed", "true");
    live.currentTime = 0;
    live.play().catch(() => stopLive());
  }
  function stopLive() {
    if (live.hidden) return;
    live.pause();
    live.hidden = true;
    img.hidden = false;
    control("live").setAttribute("aria-pressed", "false");
  }
  live.addEventListener("ended", stopLive);
  live.addEventListener("error", stopLive);
  img.addEventListener("pointerenter", (event) => { if (event.pointerType === "mouse") playLive(); });
  live.addEventListener("pointerleave", (event) => { if (event.pointerType === "mouse") stopLive(); });
  // A finger held still for a moment (not a swipe to the next photo) plays it until lifted.
  let hold = null;
  img.addEventListener("pointerdown", (event) => {
    if (event.pointerType === "mouse") return;
    const at = { x: event.clientX, y: event.clientY };
    clearTimeout(hold?.timer);
    hold = { at, timer: setTimeout(playLive, 250) };
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
        stopLive();
      });
    }
  }
  img.addEventListener("load", () => { img.hidden = false; problem.hidden = true; apply(); });

  // The slideshow: the next photo every few seconds, once the one shown has loaded (a
  // video: once it has played); it stops at the end, when the viewer closes, or when asked.
  const SLIDE_MS = 4000;
  let playing = false, slideTimer = null;
  function play(on) {
    playing = on;
    clearTimeout(slideTimer);
    control("play").setAttribute("aria-pressed", on ? "true" : "false");
    control("play").innerHTML = ICON(on ? "pause" : "play");
    box.classList.toggle("playing", on);
    if (on) nextSlide();
  }
  function nextSlide() {
    clearTimeout(slideTimer);
    if (!playing || box.hidden || !current) return;
    const asset = current;
    const video = asset.mediaType === "video" && !clip.hidden;
    const go = async () => {
      if (!playing || current !== asset) return;
      const next = await source.neighbour(asset, 1);
      if (!playing || current !== asset) return;
      if (!next) { play(false); return; }
      await step(1);
    };
    if (video) {
      clip.play().catch(() => {});
      clip.addEventListener("ended", go, { once: true });
    } else if (img.complete && img.naturalWidth) {
      slideTimer = setTimeout(go, SLIDE_MS);
    } else {
      img.addEventListener("load", () => { slideTimer = setTimeout(go, SLIDE_MS); }, { once: true });
      img.addEventListener("error", () => { slideTimer = setTimeout(go, SLIDE_MS); }, { once: true });
    }
  }

  async function step(direction) {
    if (!current) return;
    const next = await source.neighbour(current, direction);
    if (!next || box.hidden) return;
    show(next);
    history.replaceState({ viewer: next.id }, "", "/asset/" + next.id + "?ref=" + encodeURIComponent(source.ref) + "&view=1");
    source.moved?.(next);
  }
  // (`push`: false when the address is already the photo's, as after Forward.)
  function open(asset, from, push = true) {
    source = from;
    returnFocus = document.activeElement;
    box.hidden = false;
    document.body.classList.add("viewing");
    show(asset);
    if (push) history.pushState({ viewer: asset.id }, "", "/asset/" + asset.id + "?ref=" + encodeURIComponent(source.ref) + "&view=1");
    control("close").focus();
  }
  // Closed by Escape, the button or a swipe down: back to the album's address, the page
  // where it was.
  function close() {
    if (box.hidden) return;
    if (history.state?.viewer) history.back(); else hide();
  }
  function hide() {
    play(false);
    box.hidden = true;
    document.body.classList.remove("viewing");
    clip.pause();
    clip.removeAttribute("src");
    stopLive();
    live.removeAttribute("src");
    const asset = current;
    current = null;
    source?.closed?.(asset, returnFocus);
  }
  addEventListener("popstate", () => {
    if (!box.hidden && !history.state?.viewer) hide();
    // Forward to a photo the viewer showed: shown again (or, if the page no longer has it,
    // the address goes back to the album's).
    else if (box.hidden && history.state?.viewer && source) {
      if (source.reopen(history.state.viewer) === false) history.back();
    }
  });

  box.addEventListener("click", async (event) => {
    const name = event.target.closest("[data-v]")?.dataset.v;
    if (name === "close") close();
    else if (name === "prev") step(-1);
    else if (name === "next") step(1);
    else if (name === "info") toggleInfo();
    else if (name === "favourite") favourite();
    else if (name === "trash") trash();
    else if (name === "live") { if (live.hidden) playLive(); else stopLive(); }
    else if (name === "play") play(!playing);
  });
  function showFavourite(asset) {
    const star = control("favourite");
    star.setAttribute("aria-pressed", asset.isFavourite ? "true" : "false");
  }
  function toggleInfo() {
    info.hidden = !info.hidden;
    control("info").setAttribute("aria-pressed", info.hidden ? "false" : "true");
    box.classList.toggle("with-info", !info.hidden);
  }
  async function favourite() {
    const asset = current;
    const star = control("favourite");
    try {
      const changed = await (await api("PUT", "/api/assets/" + asset.id + "/favourite", { favourite: !asset.isFavourite })).json();
      asset.isFavourite = changed.isFavourite;
      if (current === asset) showFavourite(asset);
      const cell = document.querySelector('.cell[data-id="' + CSS.escape(asset.id) + '"]');
      if (cell) markFavourite(cell, asset.isFavourite);
    } catch (error) {
      star.title = error.message;
    }
  }
  // To the trash (a job of one, as the selection's are); the next photo (or the one before)
  // takes its place, and the album follows from the catalog's change.
  async function trash() {
    const asset = current;
    const button = control("trash");
    if (!asset || source.trash || button.disabled) return;
    button.disabled = true;
    try {
      const next = (await source.neighbour(asset, 1)) || (await source.neighbour(asset, -1));
      const job = await (await api("POST", "/api/jobs", { action: "trash", ids: [asset.id] })).json();
      const done = await followJob(job, () => {});
      if (done.failed) throw new Error(done.failures.map((f) => f.error).join("; "));
      button.title = "";
      source.removed?.(asset);
      if (current !== asset) return;
      if (!next) { close(); return; }
      show(next);
      history.replaceState({ viewer: next.id }, "", "/asset/" + next.id + "?ref=" + encodeURIComponent(source.ref) + "&view=1");
      source.moved?.(next);
    } catch (error) {
      button.title = error.message;
      box.querySelector(".name").textContent = error.message;
    } finally {
      button.disabled = false;
    }
  }
  document.addEventListener("keydown", (event) => {
    if (box.hidden || event.target.closest("input, select, textarea")) return;
    if (event.key === "Escape") { event.preventDefault(); close(); }
    else if (event.key === "Delete") { event.preventDefault(); trash(); }
    else if (event.key === "ArrowLeft") { event.preventDefault(); step(-1); }
    else if (event.key === "ArrowRight") { event.preventDefault(); step(1); }
    else if (event.key === "i") toggleInfo();
    else if (event.key === " ") { event.preventDefault(); play(!playing); }
    else if (event.key === "+" || event.key === "=") zoomTo(zoom.scale * 1.5, innerWidth / 2, innerHeight / 2);
    else if (event.key === "-") zoomTo(zoom.scale / 1.5, innerWidth / 2, innerHeight / 2);
    else if (event.key === "0") zoomTo(1, 0, 0);
    else return;
    event.stopPropagation();
  }, true);
  // Focus stays in the viewer while it is open.
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Tab") return;
    const stops = [...box.querySelectorAll("button, a[href], input, textarea, video:not([hidden])")].filter((e) => !e.hidden && e.offsetParent !== null);
    if (!stops.length) return;
    const first = stops[0], last = stops[stops.length - 1];
    if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus(); }
    else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus(); }
  });
  return { open, isOpen: () => !box.hidden, play };
}

// ---- An album: the timeline, selection, jobs, albums, upload --------------------------------

function albumPage(main) {
  const ref = decodeURIComponent(main.dataset.ref);
  const toolbar = main.querySelector(".toolbar");
  const countLabel = main.querySelector(".selection-count");
  const notice = main.querySelector(".notice");
  // The page's search and filters: what the timeline shows, and what "all" means to a job.
  let filters = {};
  try { filters = JSON.parse(main.dataset.filters || "{}"); } catch (_) { /* none */ }
  const byDate = ["date", "-date"].includes(main.dataset.sort);
  let total = Number(main.dataset.count);
  const viewer = makeViewer();
  // The address says only what was asked: empty fields and the album's own order left out.
  const search = main.querySelector(".search");
  search.addEventListener("submit", () => {
    for (const field of search.elements) {
      if (!field.name || field.type === "hidden") continue;
      const unchecked = field.type === "checkbox" && !field.checked;
      if (field.value === "" || unchecked || field.value === field.dataset.default) field.disabled = true;
    }
  });
  addEventListener("pageshow", () => { for (const field of search.elements) field.disabled = false; });
  history.scrollRestoration = "manual";

  // On this day: photos taken on today's date (the reader's) in earlier years, a card a year
  // above the timeline of everything; each leads to that day's photos of that year.
  async function showMemories() {
    if (ref !== "smart:all" || Object.keys(filters).some((name) => name !== "sort")) return;
    const now = new Date();
    const day = String(now.getMonth() + 1).padStart(2, "0") + "-" + String(now.getDate()).padStart(2, "0");
    const response = await fetch("/api/assets?day=" + day + "&to=" + (now.getFullYear() - 1) + "-12-31&sort=-date&limit=200",
      { credentials: "same-origin" });
    if (!response.ok) return;
    const years = new Map();
    for (const asset of (await response.json()).assets) {
      const year = localDate(asset).getUTCFullYear();
      if (!years.has(year)) years.set(year, []);
      years.get(year).push(asset);
    }
    if (!years.size || main.querySelector(".memories")) return;
    const section = document.createElement("section");
    section.className = "memories";
    section.setAttribute("aria-labelledby", "memories-title");
    const heading = document.createElement("h2");
    heading.id = "memories-title";
    heading.textContent = "On this day";
    const list = document.createElement("ul");
    for (const [year, assets] of years) {
      const ago = now.getFullYear() - year;
      const link = document.createElement("a");
      link.href = "/album?ref=smart%3Aall&day=" + day + "&from=" + year + "-01-01&to=" + year + "-12-31";
      const img = document.createElement("img");
      img.alt = "";
      img.loading = "lazy";
      img.src = assetURL(assets[0], "thumbnail", 256);
      watchBroken(img);
      const label = document.createElement("span");
      label.className = "name";
      label.textContent = ago === 1 ? "A year ago" : ago + " years ago";
      const detail = document.createElement("span");
      detail.className = "count";
      detail.textContent = year + " · " + assets.length + (assets.length === 1 ? " item" : " items");
      link.append(img, label, detail);
      const item = document.createElement("li");
      item.append(link);
      list.append(item);
    }
    section.append(heading, list);
    container.before(section);
    scrubber.style.top = Math.max(8, containerTop()) + "px";
    schedule();
  }

  function setTotal(count) {
    total = Math.max(0, count);
    main.dataset.count = String(total);
    // (Written only when it changes: it is read aloud.)
    // (A folder's own folders are counted by the page: they do not change here.)
    const folders = main.querySelectorAll(".subfolders li").length;
    const text = total + (total === 1 ? " item" : " items")
      + (folders ? " and " + folders + (folders === 1 ? " folder" : " folders") : "");
    const summary = main.querySelector(".summary");
    if (summary.textContent !== text) summary.textContent = text;
  }
  let retry = null;
  function showNotice(text, again) {
    notice.querySelector("span").textContent = text;
    notice.hidden = false;
    retry = again;
  }
  notice.querySelector("button").addEventListener("click", () => { notice.hidden = true; retry?.(); });

  // The timeline: sections (a month each, or the whole album in its own order), laid out
  // as justified rows; only the rows near the screen are in the page.
  const GAP = 4, MONTH = 44, DAY = 30, AFTER = 12;
  const container = document.createElement("div");
  container.className = "timeline";
  container.setAttribute("role", "grid");
  container.setAttribute("aria-label", "Photos");
  container.setAttribute("aria-multiselectable", "true");
  // The sections are placed on a plane inside it, in the layout's own pixels. A browser lays
  // out at most about 33 million pixels (Chrome; Firefox 17 million), less than a million
  // photos take: past LIMIT the page scrolls through LIMIT pixels and the plane moves by
  // `scale` layout pixels for each of them, shifted under the screen as it scrolls; and the
  // sections on it are placed from `base`, a round place near the screen, so that no
  // element's own position passes the browser's limit either.
  const plane = document.createElement("div");
  plane.className = "plane";
  container.append(plane);
  const LIMIT = 15e6;
  let scale = 1;
  main.querySelector(".grid").replaceWith(container);
  main.querySelector(".more")?.remove();
  const scrubber = document.createElement("nav");
  scrubber.className = "scrubber";
  scrubber.setAttribute("aria-label", "Months");
  if (byDate) main.append(scrubber);
  let sections = [], width = 0, rowHeight = 180, version = 0;
  const shown = new Map(); // section key -> { element, version, rows: Map(index -> element) }
  let active = null; // the id of the cell that takes the keyboard's focus

  const containerTop = () => container.getBoundingClientRect().top + scrollY;
  // Where the screen's top is on the plane, and a scroll that puts a place of the plane there.
  function planeY(p = scrollY - containerTop()) {
    return p > 0 ? p * scale : p;
  }
  function scrollToPlane(y) { scrollTo(0, containerTop() + (y > 0 ? y / scale : y)); }
  let shifted = 0, base = 0;
  function shift() {
    const p = scrollY - containerTop();
    const rebase = scale === 1 ? 0 : Math.max(0, Math.floor(planeY(p) / 4e6) * 4e6);
    if (rebase !== base) {
      base = rebase;
      for (const s of sections) {
        const entry = shown.get(s.key);
        if (entry) entry.element.style.top = s.top - base + "px";
      }
    }
    const by = p > 0 && scale !== 1 ? p - p * scale + base : 0;
    if (by === shifted) return;
    shifted = by;
    plane.style.transform = by ? "translateY(" + by + "px)" : "";
  }
  // As the thumbnail shows it: an edit made elsewhere (a crop) has its own shape.
  const aspect = (a) => {
    const [w, h] = a.shownWidth ? [a.shownWidth, a.shownHeight] : [a.displayWidth, a.displayHeight];
    return w > 0 && h > 0 ? Math.min(3, Math.max(0.5, w / h)) : 1;
  };
  function measure() {
    width = container.clientWidth;
    rowHeight = innerWidth < 700 ? 112 : 184;
  }
  function estimate(count) {
    const perRow = Math.max(1, (width + GAP) / (rowHeight * 1.35 + GAP));
    return Math.ceil(count / perRow) * (rowHeight + GAP + (byDate ? DAY / 2 : 0));
  }
  // Justified rows: each photo keeps its shape, a row fills the width at about the target
  // height. A new day starts a new row when the row is nearly full (it is stretched to the
  // width), else it goes on in the same row under its own label.
  function layout(s) {
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
      if (byDate) {
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
    s.height = y + estimate(Math.max(0, s.count - s.assets.length)) + AFTER;
    s.version = ++version;
  }
  function estimateSection(s) {
    s.blocks = [];
    s.loaded = s.label ? MONTH : 0;
    s.height = s.loaded + estimate(s.count) + AFTER;
    s.version = ++version;
  }
  function place() {
    let y = 0;
    for (const s of sections) { s.top = y; y += s.height; }
    const high = Math.max(innerHeight, 1);
    scale = y > LIMIT ? (y - high) / (LIMIT - high) : 1;
    container.style.height = Math.min(y, LIMIT) + "px";
    shift();
    placeScrubber(y);
  }
  // Where the screen's top is: the section there and how far into it. Kept as sections
  // above it change height, so nothing moves under the reader's eyes.
  function anchor() {
    const y = planeY();
    if (y <= 0) return null;
    // (Half a pixel of slack: a jump lands on a section's first pixel, give or take rounding.)
    const s = sections.find((s) => s.top + s.height > y + 0.5);
    return s ? { s, offset: y - s.top } : null;
  }
  function keep(mark) {
    if (!mark || !sections.includes(mark.s)) return;
    const want = mark.s.top + mark.offset;
    if (Math.abs(want - planeY()) >= 1) scrollToPlane(want);
  }
  function relayout(changed) {
    const mark = anchor();
    for (const s of changed) layout(s);
    place();
    keep(mark);
    schedule();
  }

  function makeSection(key, count) {
    const s = { key, label: byDate ? monthLabel(key) : "", count, assets: [], next: null, done: false, pending: null, reload: false };
    estimateSection(s);
    return s;
  }
  const query = (more) => new URLSearchParams(Object.assign({ album: ref }, filters, more));
  // The months again (after a job, an upload, the change feed): a section is read again
  // only when its count changed or it holds an asset that changed (`changed`: ids; null:
  // every loaded section); until then it stays on the screen as it was.
  let timelineRound = 0;
  async function loadTimeline(changed = null) {
    const round = ++timelineRound;
    const data = await (await api("GET", "/api/timeline?" + query())).json();
    if (round !== timelineRound) return; // a later call's answer is the one that counts
    const old = new Map(sections.map((s) => [s.key, s]));
    const mark = anchor();
    const list = byDate ? data.months : [{ month: "all", count: data.count }];
    sections = list.filter((m) => m.count > 0).map((m) => {
      const s = old.get(m.month);
      if (!s) return makeSection(m.month, m.count);
      const touched = changed === null || s.count !== m.count || s.assets.some((a) => changed.has(a.id));
      s.count = m.count;
      if (touched && s.assets.length) {
        s.reload = true;
        s.round = (s.round || 0) + 1;
      } else if (!s.assets.length) {
        estimateSection(s);
      }
      return s;
    });
    for (const [key, entry] of shown) {
      if (!sections.some((s) => s.key === key)) { removeRows(entry); entry.element.remove(); shown.delete(key); }
    }
    for (const s of sections) if (s.assets.length) layout(s);
    place();
    keep(mark);
    setTotal(data.count);
    // Nothing to show: say why, rather than an empty page.
    let empty = main.querySelector(".empty-state");
    if (data.count === 0 && !empty && !main.querySelector(".subfolders")) {
      empty = document.createElement("p");
      empty.className = "empty-state";
      empty.textContent = Object.keys(filters).some((name) => name !== "sort")
        ? "Nothing matches this search." : main.dataset.trash === "true" ? "The trash is empty."
          : "No photos here yet: drop some on this page, or use Upload.";
      container.before(empty);
    } else if (data.count > 0 && empty) {
      empty.remove();
    }
    schedule();
  }
  // The next page of a section (or, to be read again, as many as it showed, from its
  // start); a call while one is under way waits for that one.
  function load(s) {
    if (s.pending) return s.pending;
    s.pending = (async () => {
      const fresh = s.reload, round = s.round;
      try {
        const more = { limit: String(fresh ? Math.min(1000, Math.max(500, s.assets.length)) : 500) };
        if (byDate) more.month = s.key;
        if (s.next && !fresh) more.after = s.next;
        const page = await (await api("GET", "/api/assets?" + query(more))).json();
        if (!sections.includes(s)) return;
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
        notice.hidden = true;
        relayout([s]);
      } catch (error) {
        s.failed = true;
        showNotice(error.offline ? "The server cannot be reached." : error.message, () => {
          for (const each of sections) each.failed = false;
          schedule();
        });
      } finally {
        s.pending = null;
      }
    })();
    return s.pending;
  }
  // A section read to its end (a step back into a month lands on its last photo).
  async function loadAll(s) {
    while (!s.done && !s.failed && sections.includes(s)) await load(s);
  }
  // Drawing: what is within a screen of the viewport, nothing else.
  let scheduled = false;
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(render);
  }
  images.idle = schedule;
  function removeRow(row) {
    for (const img of row.querySelectorAll("img")) images.drop(img);
    row.remove();
  }
  function removeRows(entry) {
    for (const row of entry.rows.values()) removeRow(row);
    entry.rows.clear();
  }
  function render() {
    scheduled = false;
    // A cell with the keyboard's focus that is drawn again keeps it.
    const focused = document.activeElement?.classList?.contains("cell") ? document.activeElement.dataset.id : null;
    if (container.clientWidth !== width) {
      const mark = anchor();
      measure();
      for (const s of sections) (s.assets.length ? layout : estimateSection)(s);
      place();
      keep(mark);
    }
    shift();
    const here = planeY();
    const top = here - innerHeight, bottom = here + 2 * innerHeight;
    const visible = new Set();
    const waiting = [];
    for (const s of sections) {
      if (s.top + s.height < top || s.top > bottom) continue;
      visible.add(s.key);
      if ((s.reload || !s.done) && !s.pending && !s.failed && (s.reload || s.top + s.loaded < bottom)) {
        // A section wholly above the screen waits for the thumbnails on it (asked for
        // below, as its rows are made): after a jump, the month above would otherwise be
        // read from its start, page after page, to reach its end just above, while the
        // photos the reader jumped to are still coming. (Within a pixel: a scroll lands on
        // whole pixels.)
        if (s.top + s.height <= here + 1) waiting.push(s); else load(s);
      }
      let entry = shown.get(s.key);
      if (!entry) {
        const element = document.createElement("div");
        element.className = "section";
        if (s.label) {
          const heading = document.createElement("h2");
          heading.textContent = s.label;
          element.append(heading);
        }
        entry = { element, version: s.version, rows: new Map() };
        shown.set(s.key, entry);
        plane.append(element);
      }
      entry.element.style.top = s.top - base + "px";
      entry.element.style.height = s.height + "px";
      if (entry.version !== s.version) { removeRows(entry); entry.version = s.version; }
      s.blocks.forEach((block, index) => {
        const near = s.top + block.top + block.band + block.height >= top && s.top + block.top <= bottom;
        const row = entry.rows.get(index);
        if (near && !row) {
          const made = makeRow(s, block);
          entry.rows.set(index, made);
          entry.element.append(made);
        } else if (!near && row) {
          removeRow(row);
          entry.rows.delete(index);
        }
      });
    }
    // Nor while a page of a month on the screen is still coming: its rows, and so its
    // thumbnails, are not there yet to be waited for.
    const reading = sections.some((s) => visible.has(s.key) && !waiting.includes(s) && s.pending);
    if (!images.busy() && !reading) waiting.forEach(load);
    for (const [key, entry] of shown) {
      if (visible.has(key)) continue;
      removeRows(entry);
      entry.element.remove();
      shown.delete(key);
    }
    forget(top, bottom);
    roving();
    if (focused && !document.activeElement?.classList?.contains("cell")) {
      container.querySelector('.cell[data-id="' + focused + '"]')?.focus({ preventScroll: true });
    }
    position();
  }
  // The page keeps the assets of at most about 5,000 photos: past that, the sections
  // farthest from the screen forget theirs (keeping their height) and load them again when
  // they come back, so ten years scrolled hold no more memory than one.
  function forget(top, bottom) {
    let loaded = 0;
    for (const s of sections) loaded += s.assets.length;
    main.dataset.loaded = String(loaded);
    if (loaded <= 5000) return;
    // Never the months of the photo the viewer or the keyboard is on, or of a range's start.
    const held = new Set([active, selection.anchor, viewing].filter(Boolean));
    const far = sections.filter((s) => s.assets.length && !s.pending && (s.top + s.height < top || s.top > bottom)
      && !s.assets.some((a) => held.has(a.id)))
      .sort((a, b) => distance(b, top, bottom) - distance(a, top, bottom));
    for (const s of far) {
      if (loaded <= 4000) break;
      loaded -= s.assets.length;
      s.assets = []; s.blocks = []; s.next = null; s.done = false; s.reload = false;
      s.loaded = s.label ? MONTH : 0;
      s.version = ++version;
    }
    main.dataset.loaded = String(loaded);
  }
  const distance = (s, top, bottom) => s.top > bottom ? s.top - bottom : top - (s.top + s.height);
  function makeRow(s, block) {
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
      const cell = makeCell(s, item, block.height);
      cell.style.top = block.band + "px";
      cell.style.height = block.height + "px";
      row.append(cell);
    }
    return row;
  }
  function makeCell(s, item, height) {
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
    link.href = "/asset/" + asset.id + "?ref=" + encodeURIComponent(ref);
    link.tabIndex = -1;
    link.draggable = false;
    const name = asset.path.split("/").pop();
    const video = asset.mediaType === "video";
    const img = document.createElement("img");
    img.alt = video ? name + ": video, " + durationText(asset.duration) : name;
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
    if (asset.damage) {
      // Shown as far as it decodes (the top of a photo cut short), and marked.
      cell.classList.add("damaged");
      img.alt = name + ": " + asset.damage.problem;
      if (asset.displayWidth) {
        const badge = document.createElement("span");
        badge.className = "damage-badge";
        badge.title = asset.damage.problem;
        badge.setAttribute("aria-hidden", "true");
        const why = document.createElement("span");
        why.className = "why";
        why.textContent = " " + asset.damage.problem;
        badge.append("⚠", why);
        link.append(badge);
      }
    }
    if (video && !(asset.damage && !asset.displayWidth)) {
      // A video's poster is its representative frame; the badge says what it is and how long.
      const badge = document.createElement("span");
      badge.className = "video-badge";
      badge.setAttribute("aria-hidden", "true");
      badge.textContent = "▶ " + durationText(asset.duration);
      link.append(badge);
    } else {
      if (asset.motionVideo || asset.liveVideo) {
        // A live or motion photo: its still, marked; the viewer plays it.
        const badge = document.createElement("span");
        badge.className = "video-badge live-badge";
        badge.setAttribute("aria-hidden", "true");
        badge.textContent = "LIVE";
        link.append(badge);
        img.alt = name + ": live photo";
      }
      // (Not for one edited elsewhere: the camera's thumbnail is of the unedited photo.)
      if (asset.exifThumbnail && !asset.foreignSettings) placeholderUnless(img, asset, item.width, height);
    }
    const check = document.createElement("button");
    check.type = "button";
    check.className = "check";
    check.tabIndex = -1;
    check.setAttribute("aria-label", "Select " + name);
    check.textContent = "✓";
    cell.append(link, check);
    if (asset.isFavourite) markFavourite(cell, true);
    paint(cell);
    return cell;
  }
  addEventListener("scroll", () => { if (scale !== 1) shift(); schedule(); }, { passive: true });
  addEventListener("resize", schedule);

  // The address says where the reader is (`at=2019-03`): a reload or Back lands there.
  let lastAt = null;
  function position() {
    if (!byDate || viewer.isOpen()) return;
    const mark = anchor();
    const at = mark ? mark.s.key : null;
    if (at === lastAt) return;
    lastAt = at;
    const address = new URL(location.href);
    if (at) address.searchParams.set("at", at); else address.searchParams.delete("at");
    history.replaceState(history.state, "", address);
    for (const tick of scrubber.querySelectorAll("a[data-month]")) {
      tick.classList.toggle("here", tick.dataset.month === at);
    }
  }
  function jump(key) {
    // The newest month at or before `key` (the oldest after it, sorted oldest first).
    const descending = filters.sort !== "date";
    const s = sections.find((s) => descending ? s.key <= key : s.key >= key) || sections[sections.length - 1];
    if (!s) return;
    if (s === sections[0]) scrollTo(0, 0); else scrollToPlane(s.top);
    if (!s.done && !s.pending) load(s);
    schedule();
  }

  // The scrubber: a mark for each month, a label for each year; a press or a drag jumps.
  function placeScrubber(height) {
    if (!byDate) return;
    scrubber.textContent = "";
    const track = Math.max(1, scrubber.clientHeight || innerHeight - 80);
    const years = new Map(); // year -> { tick, top, count }
    for (const s of sections) {
      const top = s.top / Math.max(1, height) * track;
      const tick = document.createElement("a");
      tick.href = "/album?" + new URLSearchParams(Object.assign({ ref }, filters, { at: s.key }));
      tick.dataset.month = s.key;
      tick.setAttribute("aria-label", s.label);
      tick.title = s.label + " · " + s.count;
      tick.style.top = top + "px";
      tick.tabIndex = -1;
      if (s.key === lastAt) tick.classList.add("here");
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
  scrubber.addEventListener("click", (event) => {
    const tick = event.target.closest("a[data-month]");
    if (!tick) return;
    event.preventDefault();
    jump(tick.dataset.month);
  });
  let dragging = false;
  const scrubTo = (event) => {
    const rect = scrubber.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientY - rect.top) / rect.height));
    scrollTo(0, containerTop() + fraction * container.clientHeight);
  };
  scrubber.addEventListener("pointerdown", (event) => {
    if (event.target.closest("a")) return;
    dragging = true;
    scrubber.setPointerCapture(event.pointerId);
    scrubTo(event);
  });
  scrubber.addEventListener("pointermove", (event) => { if (dragging) scrubTo(event); });
  scrubber.addEventListener("pointerup", () => { dragging = false; });

  // Positions: a cell's section and index; the neighbours of an asset, loading as needed.
  const sectionOf = (key) => sections.find((s) => s.key === key);
  function locate(id) {
    for (const s of sections) {
      const i = s.assets.findIndex((a) => a.id === id);
      if (i >= 0) return { s, i };
    }
    return null;
  }
  async function neighbour(asset, direction) {
    const at = locate(asset.id);
    if (!at) return null;
    let { s, i } = at;
    i += direction;
    while (true) {
      if (i >= 0 && i < s.assets.length) return s.assets[i];
      if (direction > 0 && !s.done) {
        await load(s);
        if (i < s.assets.length) continue;
        if (!s.done) return null;
      }
      const next = sections[sections.indexOf(s) + direction];
      if (!next) return null;
      if (direction > 0 && !next.assets.length) await load(next);
      if (direction < 0) await loadAll(next);
      if (!next.assets.length) return null;
      s = next;
      i = direction > 0 ? 0 : s.assets.length - 1;
    }
  }
  function bring(id, focus) {
    const at = locate(id);
    if (!at) return;
    const block = at.s.blocks.find((b) => b.items.some((item) => item.i === at.i));
    if (block) {
      const y = at.s.top + block.top, here = planeY();
      if (y < here + 60 || y + block.band + block.height > here + innerHeight) scrollToPlane(y - innerHeight / 3);
    }
    active = id;
    render();
    const cell = container.querySelector('.cell[data-id="' + id + '"]');
    if (focus && cell) cell.focus({ preventScroll: true });
  }

  // Selection: "all" is a query less exceptions, never a list of every id.
  const selection = { all: false, ids: new Set(), except: new Set(), anchor: null };
  const isSelected = (id) => selection.all ? !selection.except.has(id) : selection.ids.has(id);
  const selectedCount = () => selection.all ? total - selection.except.size : selection.ids.size;
  function paint(cell) {
    const on = isSelected(cell.dataset.id);
    cell.classList.toggle("selected", on);
    cell.setAttribute("aria-selected", on ? "true" : "false");
  }
  function repaint() {
    for (const cell of container.querySelectorAll(".cell")) paint(cell);
    const count = selectedCount();
    countLabel.textContent = count + " selected";
    toolbar.hidden = count === 0;
    document.body.classList.toggle("selecting", count > 0);
  }
  function set(id, on) {
    if (selection.all) { on ? selection.except.delete(id) : selection.except.add(id); }
    else { on ? selection.ids.add(id) : selection.ids.delete(id); }
  }
  function clear() {
    selection.all = false; selection.ids.clear(); selection.except.clear(); selection.anchor = null;
    repaint();
  }
  function selectAll() {
    selection.all = true; selection.ids.clear(); selection.except.clear();
    repaint();
  }
  async function choose(id, range) {
    const from = range && selection.anchor ? locate(selection.anchor) : null;
    if (from && locate(id)) {
      // Every photo from the range's start to here in the timeline's order, the months
      // between read first.
      const a = sections.indexOf(from.s), b = sections.indexOf(locate(id).s);
      for (let si = Math.min(a, b); si <= Math.max(a, b); si++) await loadAll(sections[si]);
      const start = locate(selection.anchor), end = locate(id);
      if (start && end) {
        const order = (p) => [sections.indexOf(p.s), p.i];
        let [x, y] = [order(start), order(end)];
        if (x[0] > y[0] || x[0] === y[0] && x[1] > y[1]) [x, y] = [y, x];
        for (let si = x[0]; si <= y[0]; si++) {
          const list = sections[si].assets;
          const first = si === x[0] ? x[1] : 0, last = si === y[0] ? y[1] : list.length - 1;
          for (let i = first; i <= last; i++) set(list[i].id, true);
        }
      }
    } else {
      set(id, !isSelected(id));
      selection.anchor = id;
    }
    repaint();
  }

  // A click opens the viewer; the check mark (or a click while choosing, or with shift,
  // ctrl or cmd) selects; a long press selects on a touch screen.
  let pressed = null, longPressed = false;
  container.addEventListener("click", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell) return;
    event.preventDefault();
    if (longPressed) { longPressed = false; return; }
    active = cell.dataset.id;
    if (event.target.closest(".check") || event.shiftKey || event.ctrlKey || event.metaKey || selectedCount() > 0) {
      choose(cell.dataset.id, event.shiftKey);
      return;
    }
    openViewer(cell.dataset.id);
  });
  container.addEventListener("pointerdown", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell || event.pointerType === "mouse") return;
    pressed = { x: event.clientX, y: event.clientY, timer: setTimeout(() => {
      longPressed = true;
      choose(cell.dataset.id, false);
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

  // A drag that starts outside a photo (a label, a margin, the end of a row) draws a band;
  // every photo it crosses is selected, those off the screen too (the layout knows them).
  let band = null;
  container.addEventListener("pointerdown", (event) => {
    if (event.pointerType !== "mouse" || event.button !== 0 || event.target.closest(".cell")) return;
    const box = plane.getBoundingClientRect();
    band = { x: event.clientX - box.left, y: event.clientY - box.top + base, element: null, moved: false };
    container.setPointerCapture(event.pointerId);
  });
  container.addEventListener("pointermove", (event) => {
    if (!band) return;
    const box = plane.getBoundingClientRect();
    const x = event.clientX - box.left, y = event.clientY - box.top + base;
    if (!band.moved && Math.hypot(x - band.x, y - band.y) < 6) return;
    band.moved = true;
    if (!band.element) {
      band.element = document.createElement("div");
      band.element.className = "band";
      plane.append(band.element);
    }
    const [left, right] = [Math.min(x, band.x), Math.max(x, band.x)];
    const [top, bottom] = [Math.min(y, band.y), Math.max(y, band.y)];
    Object.assign(band.element.style, { left: left + "px", top: top - base + "px", width: right - left + "px", height: bottom - top + "px" });
    for (const s of sections) {
      if (s.top + s.height < top || s.top > bottom) continue;
      for (const block of s.blocks) {
        const rowTop = s.top + block.top + block.band;
        if (rowTop + block.height < top || rowTop > bottom) continue;
        for (const item of block.items) {
          if (item.left + item.width >= left && item.left <= right) set(s.assets[item.i].id, true);
        }
      }
    }
    repaint();
  });
  const endBand = () => {
    if (!band) return;
    band.element?.remove();
    band = null;
  };
  container.addEventListener("pointerup", endBand);
  container.addEventListener("pointercancel", endBand);

  // The keyboard: Tab comes into the grid at one cell; arrows move; Enter opens; Space selects.
  function roving() {
    const cells = container.querySelectorAll(".cell");
    let found = false;
    for (const cell of cells) {
      const on = cell.dataset.id === active;
      cell.tabIndex = on ? 0 : -1;
      found ||= on;
    }
    if (!found && cells.length) {
      // The first cell on the screen takes the focus.
      const first = [...cells].find((cell) => cell.getBoundingClientRect().bottom > 0) || cells[0];
      first.tabIndex = 0;
    }
  }
  async function move(id, key) {
    const at = locate(id);
    if (!at) return null;
    if (key === "ArrowLeft" || key === "ArrowRight") {
      return (await neighbour(at.s.assets[at.i], key === "ArrowRight" ? 1 : -1))?.id ?? null;
    }
    // Up and down: the row above or below (the next month's first, or the last month's
    // last, read first), the photo nearest in the middle.
    const blocks = at.s.blocks;
    const here = blocks.findIndex((b) => b.items.some((item) => item.i === at.i));
    const down = key === "ArrowDown";
    let s = at.s, target = blocks[here + (down ? 1 : -1)];
    if (!target) {
      s = sections[sections.indexOf(at.s) + (down ? 1 : -1)];
      if (!s) return null;
      if (down && !s.assets.length) await load(s);
      if (!down) await loadAll(s);
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
  container.addEventListener("keydown", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell) return;
    const id = cell.dataset.id;
    if (event.key.startsWith("Arrow")) {
      event.preventDefault();
      move(id, event.key).then(async (next) => {
        if (!next) return;
        if (event.shiftKey) await choose(next, true);
        bring(next, true);
      });
    } else if (event.key === "Enter") {
      event.preventDefault();
      openViewer(id);
    } else if (event.key === " ") {
      event.preventDefault();
      choose(id, event.shiftKey);
    } else if (event.key === "Home" || event.key === "End") {
      event.preventDefault();
      const s = event.key === "Home" ? sections[0] : sections[sections.length - 1];
      if (!s) return;
      scrollTo(0, event.key === "Home" ? 0 : document.body.scrollHeight);
      (s.assets.length ? Promise.resolve() : load(s)).then(() => {
        const asset = event.key === "Home" ? s.assets[0] : s.assets[s.assets.length - 1];
        if (asset) bring(asset.id, true);
      });
    }
  });
  document.addEventListener("keydown", (event) => {
    if (viewer.isOpen() || event.target.closest("input, select, textarea, dialog")) return;
    if (event.key === "Escape") clear();
    if (event.key === "Delete" && selectedCount() > 0 && main.dataset.trash !== "true") {
      event.preventDefault();
      runJob("trash");
    }
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "a") { event.preventDefault(); selectAll(); }
  });

  // A slideshow from the first of what the page shows, in its order.
  async function startSlideshow() {
    const first = sections[0];
    if (!first) return;
    if (!first.assets.length) await load(first);
    if (!first.assets.length) return;
    openViewer(first.assets[0].id);
    viewer.play(true);
  }

  // The viewer's address reloaded: the album's own address under it (Back and Escape return
  // there), the photo's month read, the viewer open on it.
  async function reopenViewer(id) {
    history.replaceState(null, "", ref === "smart:all" ? "/" : "/album?ref=" + encodeURIComponent(ref));
    if (!locate(id)) {
      const asset = await (await api("GET", "/api/assets/" + encodeURIComponent(id))).json();
      const date = localDate(asset);
      const key = byDate ? date.getUTCFullYear() + "-" + String(date.getUTCMonth() + 1).padStart(2, "0") : null;
      if (key) jump(key);
      for (const s of sections) {
        if (key && s.key !== key) continue;
        await loadAll(s);
        if (locate(id)) break;
      }
    }
    if (locate(id)) openViewer(id);
  }

  let viewing = null; // the photo the viewer shows: its month is never forgotten
  function openViewer(id, push = true) {
    const at = locate(id);
    if (!at) return;
    viewing = id;
    viewer.open(at.s.assets[at.i], {
      ref, neighbour, trash: main.dataset.trash === "true",
      removed: () => refresh(),
      moved: (asset) => { active = viewing = asset.id; },
      closed: (asset) => { viewing = null; if (asset) bring(asset.id, true); },
      reopen: (id) => { if (locate(id)) openViewer(id, false); else return false; },
    }, push);
  }

  function target() {
    if (selection.all) return { query: Object.assign({ album: ref }, filters), except: Array.from(selection.except) };
    return { ids: Array.from(selection.ids) };
  }

  // Jobs: progress from the job's events; the timeline follows from the catalog's changes.
  const progress = main.querySelector(".progress");
  const bar = progress.querySelector("progress");
  const progressText = progress.querySelector(".progress-text");
  const failures = progress.querySelector(".failures");
  const verbs = { apply: "Applying", revert: "Reverting", trash: "Moving to trash", restore: "Restoring" };
  async function runJob(action) {
    if (selectedCount() === 0) return;
    const body = Object.assign({ action }, target());
    if (action === "apply") body.filters = [main.querySelector("#preset").value];
    progress.hidden = false;
    failures.textContent = "";
    progressText.textContent = verbs[action] + "…";
    let job;
    try {
      job = await (await api("POST", "/api/jobs", body)).json();
    } catch (error) {
      progressText.textContent = error.message;
      return;
    }
    const show = (status) => {
      bar.max = Math.max(1, status.total);
      bar.value = status.done + status.failed;
      progressText.textContent = verbs[action] + " " + (status.done + status.failed) + "/" + status.total
        + (status.failed ? " (" + status.failed + " failed)" : "");
    };
    const status = await followJob(job, show);
    show(status);
    progressText.textContent += status.failed ? "" : " · done";
    for (const failure of status.failures) {
      const item = document.createElement("li");
      item.textContent = failure.id + ": " + failure.error;
      failures.append(item);
    }
    if (action === "trash" || action === "restore") clear();
    await refresh();
  }
  async function refresh(changed = null) {
    try { await loadTimeline(changed); } catch (error) { showNotice(error.message, () => refresh()); }
  }

  // Emptying the trash deletes files for good: asked first, and said how many went.
  async function emptyTrash() {
    if (!confirm("Delete the " + total + " photos in the trash for good? This cannot be undone.")) return;
    progress.hidden = false;
    failures.textContent = "";
    try {
      const emptied = await (await api("POST", "/api/trash/empty")).json();
      progressText.textContent = "Emptied: " + emptied.assets.length + " deleted for good";
      clear();
      await refresh();
    } catch (error) {
      progressText.textContent = error.message;
    }
  }

  function download() {
    if (selectedCount() === 0) return;
    const form = document.createElement("form");
    form.method = "post";
    form.action = "/api/download";
    const fields = { csrf };
    const t = target();
    if (t.ids) fields.ids = t.ids.join(",");
    else Object.assign(fields, t.query, t.except.length ? { except: t.except.join(",") } : {});
    for (const [name, value] of Object.entries(fields)) {
      const input = document.createElement("input");
      input.type = "hidden"; input.name = name; input.value = value;
      form.append(input);
    }
    document.body.append(form);
    form.submit();
    form.remove();
  }

  // Albums: add the selection to a new or existing one; rename this one; take out of it.
  const dialog = main.querySelector(".album-dialog");
  const dialogError = dialog.querySelector(".dialog-error");
  // The dialog opens at once; the albums there are listed when they arrive.
  function addToAlbum() {
    if (selectedCount() === 0) return;
    dialogError.textContent = "";
    const titles = dialog.querySelector("#album-titles");
    titles.textContent = "";
    const existing = api("GET", "/api/albums").then((r) => r.json())
      .then((data) => data.albums.filter((a) => a.kind === "user").map((a) => a.title))
      .catch(() => []); // a new one can still be made
    existing.then((list) => {
      for (const title of list) {
        const option = document.createElement("option");
        option.value = title;
        titles.append(option);
      }
    });
    dialog.showModal();
    dialog.querySelector("input").focus();
    dialog.onsubmit = async (event) => {
      event.preventDefault();
      const title = dialog.querySelector("input").value.trim();
      if (!title) return;
      try {
        if (!(await existing).includes(title)) await api("POST", "/api/albums", { op: "create", title });
        await api("POST", "/api/albums", Object.assign({ op: "add", title }, target()));
        dialog.close();
        progress.hidden = false;
        failures.textContent = "";
        progressText.textContent = "";
        const link = document.createElement("a");
        link.href = "/album?ref=" + encodeURIComponent(title);
        link.textContent = title;
        progressText.append("Added " + selectedCount() + " to ", link);
        clear();
      } catch (error) {
        dialogError.textContent = error.message;
      }
    };
  }
  dialog.querySelector('[data-act="cancel"]').addEventListener("click", () => dialog.close());
  // Links that show this album to whoever has them: made (the link shown once), listed with
  // their visits, revoked.
  const shareDialog = main.querySelector(".share-dialog");
  async function listShares() {
    const list = shareDialog.querySelector(".share-links");
    list.textContent = "";
    const { links } = await (await api("GET", "/api/shares?album=" + encodeURIComponent(ref))).json();
    if (!links.length) {
      const none = document.createElement("li");
      none.textContent = "None yet.";
      list.append(none);
    }
    for (const link of links) {
      const item = document.createElement("li");
      const notes = [link.views + (link.views === 1 ? " visit" : " visits"),
        link.expires ? "until " + link.expires.slice(0, 10) : "no end",
        link.password ? "password" : "", link.download ? "downloads" : ""].filter(Boolean);
      item.textContent = "Made " + link.created.slice(0, 10) + " · " + notes.join(" · ") + " ";
      const revoke = document.createElement("button");
      revoke.type = "button";
      revoke.className = "danger";
      revoke.textContent = "Revoke";
      revoke.setAttribute("aria-label", "Revoke the link made " + link.created.slice(0, 10));
      revoke.addEventListener("click", async () => {
        try {
          await api("DELETE", "/api/shares/" + link.id);
          await listShares();
        } catch (error) {
          shareDialog.querySelector(".dialog-error").textContent = error.message;
        }
      });
      item.append(revoke);
      list.append(item);
    }
  }
  function shareAlbum() {
    const form = shareDialog.querySelector("form");
    form.reset();
    shareDialog.querySelector(".share-made").hidden = true;
    shareDialog.querySelector(".dialog-error").textContent = "";
    shareDialog.showModal();
    listShares().catch((error) => { shareDialog.querySelector(".dialog-error").textContent = error.message; });
    form.onsubmit = async (event) => {
      event.preventDefault();
      const body = { album: ref, download: form.elements.download.checked };
      if (form.elements.days.value) body.days = Number(form.elements.days.value);
      if (form.elements.password.value) body.password = form.elements.password.value;
      try {
        const made = await (await api("POST", "/api/shares", body)).json();
        const url = shareDialog.querySelector(".share-url");
        url.value = location.origin + made.url;
        shareDialog.querySelector(".share-made").hidden = false;
        url.focus();
        url.select();
        await listShares();
      } catch (error) {
        shareDialog.querySelector(".dialog-error").textContent = error.message;
      }
    };
  }
  shareDialog?.querySelector('[data-act="close-share"]').addEventListener("click", () => shareDialog.close());

  async function renameAlbum() {
    const title = prompt("A new title for " + ref, ref);
    if (!title || title === ref) return;
    try {
      await api("POST", "/api/albums", { op: "rename", title: ref, newTitle: title });
      location.href = "/album?ref=" + encodeURIComponent(title);
    } catch (error) {
      showNotice(error.message, null);
    }
  }
  // A user album deleted, once confirmed: its photos stay in the library (and in others).
  async function deleteAlbum() {
    if (!confirm("Delete the album " + ref + "? Its photos stay in the library.")) return;
    try {
      await api("POST", "/api/albums", { op: "delete", title: ref });
      location.href = "/albums";
    } catch (error) {
      showNotice(error.message, null);
    }
  }
  async function removeFromAlbum() {
    try {
      await api("POST", "/api/albums", Object.assign({ op: "remove", title: ref }, target()));
      clear();
      await refresh();
    } catch (error) {
      showNotice(error.message, null);
    }
  }

  toolbar.addEventListener("click", (event) => {
    const act = event.target.closest("button")?.dataset.act;
    if (!act) return;
    if (act === "clear") clear();
    else if (act === "download") download();
    else if (act === "album") addToAlbum();
    else if (act === "unalbum") removeFromAlbum();
    else runJob(act);
  });
  const actions = main.querySelector(".album-actions");
  for (const element of actions.children) element.hidden = false;
  actions.addEventListener("click", (event) => {
    const act = event.target.closest("button")?.dataset.act;
    if (act === "select-all") selectAll();
    if (act === "slideshow") startSlideshow();
    else if (act === "rename") renameAlbum();
    else if (act === "share") shareAlbum();
    else if (act === "delete-album") deleteAlbum();
    else if (act === "upload") picker.click();
    else if (act === "empty") emptyTrash();
  });

  // Upload: a file picker, or files dropped anywhere on the page; each with its progress.
  const uploadBox = main.querySelector(".upload");
  const uploads = main.querySelector(".uploads");
  function upload(file) {
    uploadBox.hidden = false;
    const item = document.createElement("li");
    const meter = document.createElement("progress");
    meter.max = 1; meter.value = 0;
    const label = document.createElement("span");
    label.textContent = file.name;
    item.append(label, " ", meter);
    uploads.append(item);
    return new Promise((resolve) => {
      const request = new XMLHttpRequest();
      request.open("POST", "/api/uploads?name=" + encodeURIComponent(file.name));
      request.setRequestHeader("X-CSRF-Token", csrf);
      request.upload.addEventListener("progress", (event) => {
        if (event.lengthComputable) meter.value = event.loaded / event.total;
      });
      request.addEventListener("load", () => {
        let text = request.status + "";
        try {
          const body = JSON.parse(request.responseText);
          text = body.error ? body.error.message : body.status;
          // The server's message names the file too: said once.
          const colon = text.indexOf(": ");
          if (body.error && colon > 0 && text.slice(0, colon).endsWith(file.name)) text = text.slice(colon + 2);
        } catch (_) { /* not JSON */ }
        meter.value = 1;
        label.textContent = file.name + ": " + text;
        item.classList.add(request.status < 300 ? "ok" : "failed");
        resolve();
      });
      request.addEventListener("error", () => { label.textContent = file.name + ": the server cannot be reached"; resolve(); });
      request.send(file);
    });
  }
  const picker = main.querySelector("#files");
  picker.addEventListener("change", async (event) => {
    for (const file of event.target.files) await upload(file);
    picker.value = "";
    await refresh();
  });
  if (main.dataset.trash !== "true") {
    document.addEventListener("dragover", (event) => { event.preventDefault(); document.body.classList.add("dragging"); });
    document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
    document.addEventListener("drop", async (event) => {
      event.preventDefault();
      document.body.classList.remove("dragging");
      for (const file of event.dataTransfer.files) await upload(file);
      await refresh();
    });
  }

  // Live: the catalog's changes (another window, a scan, an upload) update the counts and
  // the months on the screen, a moment after the last one.
  // (At most one refresh a second: a scan's thousands of changes do not hold it back.)
  let waiting = null, changedIDs = new Set();
  const feed = new EventSource("/api/changes");
  feed.addEventListener("change", (event) => {
    try { changedIDs.add(JSON.parse(event.data).id); } catch (_) { /* counts still checked */ }
    if (waiting) return;
    waiting = setTimeout(() => {
      const ids = changedIDs;
      waiting = null;
      changedIDs = new Set();
      refresh(ids);
    }, 1000);
  });
  addEventListener("pagehide", () => feed.close());

  measure();
  repaint();
  scrubber.style.top = Math.max(8, containerTop()) + "px";
  loadTimeline().then(() => {
    const at = new URLSearchParams(location.search).get("at");
    if (main.dataset.open) reopenViewer(main.dataset.open).catch(() => {});
    else if (at && byDate) jump(at);
    else showMemories().catch(() => {});
    schedule();
  }).catch((error) => showNotice(error.offline ? "The server cannot be reached." : error.message, () => location.reload()));
}

// ---- A photo's own page: arrow keys, stars, favourite, and the editor ----------------------

function assetPage(main) {
  document.addEventListener("keydown", (event) => {
    // The editor's controls (a curve's points, the colour swatches) take the arrow keys.
    if (event.defaultPrevented || event.target.closest("input, select, textarea, .editor")) return;
    const rel = event.key === "ArrowLeft" ? "prev" : event.key === "ArrowRight" ? "next" : null;
    const link = rel && document.querySelector('a[rel="' + rel + '"]');
    if (link) location.href = link.href;
    if (event.key === "Escape") {
      const back = document.querySelector("a.back");
      if (back) location.href = back.href;
    }
  });
  const id = main.dataset.id;
  // A favourite in one press, kept by the catalog (the page says so again after a reload).
  const star = main.querySelector(".favourite");
  star.hidden = false;
  star.addEventListener("click", async () => {
    const on = star.getAttribute("aria-pressed") !== "true";
    try {
      const asset = await (await api("PUT", "/api/assets/" + id + "/favourite", { favourite: on })).json();
      star.setAttribute("aria-pressed", asset.isFavourite ? "true" : "false");
      star.textContent = (asset.isFavourite ? "★" : "☆") + " Favourite";
    } catch (error) {
      star.textContent = error.message;
    }
  });
  // Stars in one press, written to the photo's sidecar (the same stars again clears them).
  const rating = main.querySelector(".rating");
  rating.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-stars]");
    if (!button) return;
    const stars = Number(button.dataset.stars);
    const wanted = Number(rating.dataset.rating) === stars ? 0 : stars;
    try {
      const asset = await (await api("PATCH", "/api/assets/" + id + "/metadata", { rating: wanted })).json();
      const now = asset.rating ?? 0;
      rating.dataset.rating = String(now);
      rating.setAttribute("aria-label", "Rating: " + (now > 0 ? now + " of 5 stars" : "none"));
      for (const each of rating.querySelectorAll("button[data-stars]")) {
        const on = Number(each.dataset.stars) <= now;
        each.setAttribute("aria-pressed", on ? "true" : "false");
        each.textContent = on ? "★" : "☆";
      }
      rating.querySelector(".rejected")?.remove();
    } catch (error) {
      rating.setAttribute("aria-label", error.message);
    }
  });
  const photo = main.querySelector(".photo");
  // A damaged file of which nothing decodes has its sentence in the photo's place.
  if (!photo) return;
  // The photo stays in place (a preview may load into it later); a notice stands in for it.
  const notice = document.createElement("p");
  notice.className = "broken";
  notice.textContent = "This photo cannot be shown.";
  notice.hidden = true;
  photo.after(notice);
  const failed = (on) => { photo.hidden = on; notice.hidden = !on; };
  photo.addEventListener("error", () => failed(true));
  photo.addEventListener("load", () => failed(false));
  if (photo.complete && photo.naturalWidth === 0) failed(true);
  // An edit another program made: the photo's own pixels on one press, the edit on another.
  const original = main.querySelector(".show-original");
  original?.addEventListener("click", (event) => {
    event.preventDefault();
    const on = original.getAttribute("aria-pressed") !== "true";
    original.setAttribute("aria-pressed", on ? "true" : "false");
    original.textContent = on ? "Show the edit" : "Show the original";
    photo.src = on ? original.href : original.dataset.edited;
  });
  // The editor is editor.js's (loaded on this page only).
}

// ---- The map: the photos with a position, gathered into markers by where they are ----------

function mapPage(main) {
  const element = main.querySelector("#map");
  if (!element || !window.L) return;
  const status = main.querySelector(".map-status");
  const map = L.map(element, { worldCopyJump: true }).setView([20, 0], 2);
  L.tileLayer(element.dataset.tiles, { maxZoom: 18, attribution: element.dataset.attribution || "" }).addTo(map);
  const markers = L.layerGroup().addTo(map);
  let round = 0, fitted = false;
  async function refresh() {
    const here = ++round;
    const b = map.getBounds();
    const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
    const wide = b.getEast() - b.getWest() >= 360;
    const params = new URLSearchParams({
      zoom: String(map.getZoom()),
      south: String(clamp(b.getSouth(), -90, 90)), north: String(clamp(b.getNorth(), -90, 90)),
      west: String(wide ? -180 : L.Util.wrapNum(b.getWest(), [-180, 180], true)),
      east: String(wide ? 180 : L.Util.wrapNum(b.getEast(), [-180, 180], true)),
    });
    try {
      const { clusters } = await (await api("GET", "/api/map?" + params)).json();
      if (here !== round) return;
      markers.clearLayers();
      for (const cluster of clusters) {
        const icon = document.createElement("div");
        if (cluster.poster) {
          const img = document.createElement("img");
          img.alt = "";
          img.src = "/api/assets/" + cluster.poster + "/thumbnail?size=128&v=" + cluster.version;
          icon.append(img);
        }
        const count = document.createElement("span");
        count.className = "n";
        count.textContent = String(cluster.count);
        icon.append(count);
        const marker = L.marker([cluster.latitude, cluster.longitude], {
          icon: L.divIcon({ className: "map-cluster", html: icon, iconSize: [52, 52] }),
          title: cluster.count === 1 ? "1 photo" : cluster.count + " photos",
          keyboard: true,
        });
        // A cluster opens up; one photo opens.
        marker.on("click", () => {
          if (cluster.count > 1 && map.getZoom() < 18) map.setView([cluster.latitude, cluster.longitude], map.getZoom() + 2);
          else if (cluster.poster) location.href = "/asset/" + cluster.poster;
        });
        markers.addLayer(marker);
      }
      const total = clusters.reduce((sum, c) => sum + c.count, 0);
      status.textContent = total === 1 ? "1 photo here" : total + " photos here";
      if (!fitted && clusters.length) {
        fitted = true;
        map.fitBounds(L.latLngBounds(clusters.map((c) => [c.latitude, c.longitude])).pad(0.2), { maxZoom: 12 });
      }
    } catch (error) {
      status.textContent = error.message;
    }
  }
  map.on("moveend", refresh);
  refresh();
}

// ---- Duplicates: keep one of each group, the rest to the trash ----------------------------

function duplicatesPage(main) {
  const summary = main.querySelector(".summary");
  main.addEventListener("click", async (event) => {
    const button = event.target.closest('button[data-act="resolve"]');
    if (!button) return;
    const group = button.closest(".duplicate-group");
    const keep = group.querySelector("input[type=radio]:checked")?.value;
    const ids = [...group.querySelectorAll("input[type=radio]")].map((input) => input.value).filter((id) => id !== keep);
    const status = group.querySelector(".status");
    button.disabled = true;
    status.textContent = "Moving " + ids.length + " to the trash…";
    try {
      const job = await (await api("POST", "/api/jobs", { action: "trash", ids })).json();
      const done = await followJob(job, () => {});
      if (done.failed) {
        status.textContent = done.failures.map((f) => f.error).join("; ");
        button.disabled = false;
        return;
      }
      group.remove();
      const left = main.querySelectorAll(".duplicate-group").length;
      const pages = main.querySelector(".pager");
      summary.textContent = left === 0 ? (pages ? "No duplicates left on this page." : "No duplicates left.")
        : left + (left === 1 ? " group" : " groups") + (pages ? " on this page" : "");
    } catch (error) {
      status.textContent = error.message;
      button.disabled = false;
    }
  });
  for (const button of main.querySelectorAll('button[data-act="resolve"]')) button.hidden = false;
}

document.addEventListener("DOMContentLoaded", () => {
  const main = document.querySelector("main");
  for (const img of document.querySelectorAll(".grid img, .albums img, .duplicate-group img")) watchBroken(img);
  const page = document.body.dataset.page;
  if (page === "album") albumPage(main);
  if (page === "asset") assetPage(main);
  if (page === "duplicates") duplicatesPage(main);
  if (page === "map") mapPage(main);
});
