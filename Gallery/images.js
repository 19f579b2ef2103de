// Thumbnails: at most four asked for at once (those on the screen first), the camera's own
// small JPEG shown while one is made, and a tile in words for one that cannot be shown.

import { icon } from "./words.js";

// A picture the server could not make (a damaged file, a format it cannot read) becomes a
// tile that says so, instead of the browser's broken-image icon.
export function showBroken(img) {
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
export function explainBroken(img) {
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
export function watchBroken(img) {
  img.addEventListener("error", () => { if (img.getAttribute("src")) showBroken(img); });
  // Failed before this script ran (it is deferred): a lazy image not yet asked for is not
  // complete, so only a real failure matches.
  if (img.complete && img.naturalWidth === 0 && img.getAttribute("src")) showBroken(img);
}

// Four requests at once; those still waiting forgotten when their row leaves. (A browser
// opens six connections to a server over HTTP/1.1: four for thumbnails leave two for the
// page's lists and the placeholders, which are answered at once.)

export const images = {
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
export function onScreen(element) {
  const box = (element.closest(".cell") || element).getBoundingClientRect();
  return box.bottom > 0 && box.top < innerHeight;
}
export function placeholderUnless(img, asset, width, height) {
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

// A favourite's mark on its cell (a heart in the corner, and said in the picture's name),
// wherever the cell is: set when the cell is made and when the viewer changes it.
export function markFavourite(cell, on) {
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
