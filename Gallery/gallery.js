// Darkroom's gallery: a timeline (months of justified rows, only the visible rows in the
// page), a viewer over it, selection with batch jobs, albums, upload, the editor and the
// duplicates page. Pages work without scripts; these add what needs one. Native ES modules
// served as they are written (no build step), under a path that names their version; no
// inline script (strict CSP). This one starts the page's own module:
// album.js (with timeline.js, selection.js, viewer.js), asset.js (and editor.js), map.js,
// duplicates.js, space.js; api.js, images.js and words.js are shared.

import { AlbumPage } from "./album.js";
import { assetPage } from "./asset.js";
import { duplicatesPage } from "./duplicates.js";
import { watchBroken } from "./images.js";
import { mapPage } from "./map.js";
import { spacePage } from "./space.js";

const pages = {
  album: (main) => new AlbumPage(main), asset: assetPage, duplicates: duplicatesPage, map: mapPage,
  space: spacePage,
};

function start() {
  const main = document.querySelector("main");
  for (const img of document.querySelectorAll(".grid img, .albums img, .duplicate-group img")) watchBroken(img);
  pages[document.body.dataset.page]?.(main);
}
// (A module runs after the page is parsed, before DOMContentLoaded; Leaflet, a classic
// deferred script after this one on the map's page, has run by then.)
document.addEventListener("DOMContentLoaded", start);
