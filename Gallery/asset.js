// A photo's own page: arrow keys to its neighbours, Escape back to the album, favourite and
// stars in one press, the original of an edit made elsewhere. (Its editor is editor.js.) The
// same page shows a photo of an unlocked space, over the space's asset routes
// (`data-api`), without the stars and favourite a space does not keep.

import { api } from "./api.js";

export function assetPage(main) {
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
  const assets = main.dataset.api;
  // A favourite in one press, kept by the catalog (the page says so again after a reload).
  const star = main.querySelector(".favourite");
  if (star) star.hidden = false;
  star?.addEventListener("click", async () => {
    const on = star.getAttribute("aria-pressed") !== "true";
    try {
      const asset = await (await api("PUT", assets + "/" + id + "/favourite", { favourite: on })).json();
      star.setAttribute("aria-pressed", asset.isFavourite ? "true" : "false");
      star.textContent = (asset.isFavourite ? "★" : "☆") + " Favourite";
    } catch (error) {
      star.textContent = error.message;
    }
  });
  // Stars in one press, written to the photo's sidecar (the same stars again clears them).
  const rating = main.querySelector(".rating");
  rating?.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-stars]");
    if (!button) return;
    const stars = Number(button.dataset.stars);
    const wanted = Number(rating.dataset.rating) === stars ? 0 : stars;
    try {
      const asset = await (await api("PATCH", assets + "/" + id + "/metadata", { rating: wanted })).json();
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
}
