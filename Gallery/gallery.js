// Darkroom's gallery: multi-select, batch jobs with progress, upload, and the editor.
// Pages work without this file; it adds what needs a script. No inline script (strict CSP).
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";

// A picture the server could not make (a damaged file, a format it cannot read) becomes a
// tile that says so, instead of the browser's broken-image icon.
function showBroken(img) {
  const tile = document.createElement("span");
  tile.className = "broken";
  tile.setAttribute("role", "img");
  tile.setAttribute("aria-label", (img.alt ? img.alt + ": " : "") + "cannot be shown");
  tile.textContent = "Cannot be shown";
  img.replaceWith(tile);
}
// A grid cell's thumbnail of one version of an asset, 200 px (400 on a dense screen).
function thumbnailImage(id, version, alt) {
  const img = document.createElement("img");
  const url = (size) => "/api/assets/" + id + "/thumbnail?size=" + size + "&v=" + version;
  img.src = url(200);
  img.srcset = url(200) + " 1x, " + url(400) + " 2x";
  img.width = 200; img.height = 200; img.alt = alt;
  watchBroken(img);
  return img;
}
function watchBroken(img) {
  img.addEventListener("error", () => showBroken(img));
  // Failed before this script ran (it is deferred): a lazy image not yet asked for is not
  // complete, so only a real failure matches.
  if (img.complete && img.naturalWidth === 0 && img.getAttribute("src")) showBroken(img);
}

async function api(method, url, body) {
  const headers = { "X-CSRF-Token": csrf };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    let message = response.status + " " + response.statusText;
    try { message = (await response.json()).error.message; } catch (_) { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

// ---- An album: selection, toolbar, jobs, upload ------------------------------------------

function albumPage(main) {
  const grid = main.querySelector(".grid");
  const toolbar = main.querySelector(".toolbar");
  const countLabel = main.querySelector(".selection-count");
  const ref = main.dataset.ref;
  // The page's search and filters: "all" means all that match them, in jobs and downloads.
  let filters = {};
  try { filters = JSON.parse(main.dataset.filters || "{}"); } catch (_) { /* none */ }
  let total = Number(main.dataset.count);
  // The album's size where it is shown, kept true as photos leave and arrive.
  function setTotal(count) {
    total = Math.max(0, count);
    main.dataset.count = String(total);
    main.querySelector(".summary").textContent = total + (total === 1 ? " item" : " items");
    main.querySelector('button[data-act="select-all"]').textContent = "Select all " + total;
  }
  // "All" is a query less exceptions, never a list of every id: 50,000 photos stay cheap.
  const selection = { all: false, ids: new Set(), except: new Set(), anchor: -1 };
  toolbar.hidden = false;
  main.querySelector(".upload").hidden = false;

  const cells = () => Array.from(grid.querySelectorAll(".cell"));
  const isSelected = (id) => selection.all ? !selection.except.has(id) : selection.ids.has(id);
  const selectedCount = () => selection.all ? total - selection.except.size : selection.ids.size;

  function render() {
    for (const cell of cells()) {
      const on = isSelected(cell.dataset.id);
      cell.classList.toggle("selected", on);
      cell.querySelector("a").setAttribute("aria-selected", on ? "true" : "false");
    }
    countLabel.textContent = selectedCount() + " selected";
  }
  function set(id, on) {
    if (selection.all) { on ? selection.except.delete(id) : selection.except.add(id); }
    else { on ? selection.ids.add(id) : selection.ids.delete(id); }
  }
  function clear() {
    selection.all = false; selection.ids.clear(); selection.except.clear(); selection.anchor = -1;
    render();
  }
  function selectAll() {
    selection.all = true; selection.ids.clear(); selection.except.clear();
    render();
  }
  function choose(cell, event) {
    const list = cells();
    const index = list.indexOf(cell);
    const id = cell.dataset.id;
    if (event.shiftKey && selection.anchor >= 0) {
      const [from, to] = [Math.min(selection.anchor, index), Math.max(selection.anchor, index)];
      if (!(event.ctrlKey || event.metaKey) && !selection.all) selection.ids.clear();
      for (let i = from; i <= to; i++) set(list[i].dataset.id, true);
    } else if (event.ctrlKey || event.metaKey) {
      set(id, !isSelected(id));
      selection.anchor = index;
    } else {
      selection.all = false; selection.except.clear(); selection.ids.clear();
      selection.ids.add(id);
      selection.anchor = index;
    }
    render();
  }

  grid.addEventListener("click", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell) return;
    event.preventDefault();
    choose(cell, event);
  });
  grid.addEventListener("dblclick", (event) => {
    const cell = event.target.closest(".cell");
    if (cell) location.href = cell.querySelector("a").href;
  });
  grid.addEventListener("keydown", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell) return;
    if (event.key === " ") { event.preventDefault(); choose(cell, { ctrlKey: true, shiftKey: event.shiftKey }); }
    // Enter opens the viewer (a click would select).
    if (event.key === "Enter") { event.preventDefault(); location.href = cell.querySelector("a").href; }
  });
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    if (event.key === "Escape") clear();
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "a") { event.preventDefault(); selectAll(); }
  });

  function target() {
    if (selection.all) {
      return { query: Object.assign({ album: decodeURIComponent(ref) }, filters), except: Array.from(selection.except) };
    }
    return { ids: Array.from(selection.ids) };
  }

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
    // The cells the job covers: the selection when it was sent (progress events may start
    // after the first assets are done, so they cannot tell).
    const touched = new Set(cells().map((cell) => cell.dataset.id).filter(isSelected));
    const events = new EventSource("/api/jobs/" + job.id + "/events");
    const show = (status) => {
      bar.max = Math.max(1, status.total);
      bar.value = status.done + status.failed;
      progressText.textContent = verbs[action] + " " + (status.done + status.failed) + "/" + status.total
        + (status.failed ? " (" + status.failed + " failed)" : "");
    };
    events.addEventListener("progress", (event) => {
      const data = JSON.parse(event.data);
      show(data.status);
    });
    events.addEventListener("done", async (event) => {
      events.close();
      const status = JSON.parse(event.data);
      show(status);
      progressText.textContent += status.failed ? "" : " · done";
      for (const failure of status.failures) {
        const item = document.createElement("li");
        item.textContent = failure.id + ": " + failure.error;
        failures.append(item);
      }
      await refresh(action, touched);
    });
  }

  // After a job: edited cells get their new version's thumbnail; moved ones leave.
  async function refresh(action, touched) {
    let removed = 0;
    for (const cell of cells()) {
      const id = cell.dataset.id;
      if (!touched.has(id)) continue;
      if (action === "trash" || action === "restore") { cell.remove(); removed += 1; continue; }
      try {
        const asset = await (await api("GET", "/api/assets/" + id)).json();
        const broken = cell.querySelector(".broken");
        if (broken) {
          // Shown again from its new version (an edit or a revert may have mended it).
          const alt = (broken.getAttribute("aria-label") || "").replace(/: cannot be shown$/, "");
          broken.replaceWith(thumbnailImage(id, asset.version, alt));
          continue;
        }
        const img = cell.querySelector("img");
        for (const attribute of ["src", "srcset"]) {
          img.setAttribute(attribute, img.getAttribute(attribute).replace(/v=[0-9a-f]*/g, "v=" + asset.version));
        }
      } catch (_) { /* left as it is */ }
    }
    // Cells not on this page left too (a selection of all): the album's count says how many.
    if (action === "trash" || action === "restore") {
      clear();  // what left the page leaves the selection with it
      try {
        const search = new URLSearchParams(Object.assign({ limit: "1", album: decodeURIComponent(ref) }, filters));
        const page = await (await api("GET", "/api/assets?" + search)).json();
        setTotal(page.count);
      } catch (_) { setTotal(total - removed); }
    }
    render();
  }

  // Emptying the trash deletes files for good: asked first, and said how many went.
  async function emptyTrash() {
    if (!confirm("Delete the " + total + " photos in the trash for good? This cannot be undone.")) return;
    progress.hidden = false;
    failures.textContent = "";
    try {
      const emptied = await (await api("POST", "/api/trash/empty")).json();
      progressText.textContent = "Emptied: " + emptied.assets.length + " deleted for good";
      for (const cell of cells()) cell.remove();
      clear();
      setTotal(0);
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
    else Object.assign(fields, t.query);
    for (const [name, value] of Object.entries(fields)) {
      const input = document.createElement("input");
      input.type = "hidden"; input.name = name; input.value = value;
      form.append(input);
    }
    document.body.append(form);
    form.submit();
    form.remove();
  }

  toolbar.addEventListener("click", (event) => {
    const act = event.target.closest("button")?.dataset.act;
    if (!act) return;
    if (act === "select-all") selectAll();
    else if (act === "clear") clear();
    else if (act === "download") download();
    else if (act === "empty") emptyTrash();
    else runJob(act);
  });

  // Upload: a file picker, or files dropped anywhere on the page; each with its progress.
  const uploads = main.querySelector(".uploads");
  function upload(file) {
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
          if (body.status === "added") addCell(body.asset);
        } catch (_) { /* not JSON */ }
        meter.value = 1;
        label.textContent = file.name + ": " + text;
        item.classList.add(request.status < 300 ? "ok" : "failed");
        resolve();
      });
      request.addEventListener("error", () => { label.textContent = file.name + ": failed"; resolve(); });
      request.send(file);
    });
  }
  function addCell(asset) {
    if (grid.querySelector('[data-id="' + asset.id + '"]')) return;
    const cell = document.createElement("li");
    cell.className = "cell";
    cell.dataset.id = asset.id;
    const link = document.createElement("a");
    link.href = "/asset/" + asset.id + "?ref=" + encodeURIComponent(ref);
    link.append(thumbnailImage(asset.id, asset.version, asset.path));
    cell.append(link);
    grid.prepend(cell);
    setTotal(total + 1);
  }
  main.querySelector("#files").addEventListener("change", async (event) => {
    for (const file of event.target.files) await upload(file);
  });
  document.addEventListener("dragover", (event) => { event.preventDefault(); document.body.classList.add("dragging"); });
  document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
  document.addEventListener("drop", async (event) => {
    event.preventDefault();
    document.body.classList.remove("dragging");
    for (const file of event.dataTransfer.files) await upload(file);
  });
  render();
}

// ---- A photo: arrow keys, and the editor -------------------------------------------------

function assetPage(main) {
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    const rel = event.key === "ArrowLeft" ? "prev" : event.key === "ArrowRight" ? "next" : null;
    const link = rel && document.querySelector('a[rel="' + rel + '"]');
    if (link) location.href = link.href;
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
  const form = main.querySelector(".editor");
  const photo = main.querySelector(".photo");
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
  const status = form.querySelector(".status");
  const history = form.querySelector(".history");
  const shown = photo.src;
  form.hidden = false;

  function filters() {
    const tone = [], noir = [], crop = [];
    for (const input of form.querySelectorAll("[data-filter]")) {
      const list = { tone, noir, crop }[input.dataset.filter];
      if (input.value !== "" && Number(input.value) !== 0) list.push(input.name + "=" + input.value);
    }
    const result = [];
    if (tone.length) result.push("tone " + tone.join(" "));
    if (noir.length) result.push("noir " + noir.join(" "));
    if (crop.length) result.push("crop " + crop.join(" "));
    return result;
  }

  let timer = null, shownURL = null, generation = 0;
  async function preview(list) {
    const mine = ++generation;
    try {
      const response = await api("POST", "/api/assets/" + id + "/preview", {
        filters: list.length ? list : ["tone"], size: Math.min(2048, Math.round(1600 * (window.devicePixelRatio || 1))),
      });
      const blob = await response.blob();
      if (mine !== generation) return;
      if (shownURL) URL.revokeObjectURL(shownURL);
      shownURL = URL.createObjectURL(blob);
      photo.src = shownURL;
      status.textContent = "";
    } catch (error) {
      status.textContent = error.message;
    }
  }
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => preview(filters()), 150);
  });

  function setFrom(graph) {
    for (const input of form.querySelectorAll("[data-filter]")) {
      input.value = input.name === "aspect" ? "" : (input.dataset.filter === "noir" ? 0 : 0);
    }
    for (const node of graph?.nodes || []) {
      for (const [name, value] of Object.entries(node.params || {})) {
        const input = form.querySelector('[data-filter="' + node.op + '"][name="' + name + '"]');
        if (input) input.value = value;
      }
      if (node.op === "noir" && !("intensity" in (node.params || {}))) {
        form.querySelector('[data-filter="noir"]').value = 1;
      }
    }
  }

  async function loadHistory() {
    history.textContent = "";
    try {
      const data = await (await api("GET", "/api/assets/" + id + "/history")).json();
      for (const version of data.versions) {
        const item = document.createElement("li");
        item.textContent = "v" + version.version + ": " + version.filters.join(" | ")
          + (version.version === data.current ? " (current)" : "");
        history.append(item);
      }
      const current = data.versions.find((v) => v.version === data.current);
      setFrom(current?.graph);
    } catch (error) {
      status.textContent = error.message;
    }
  }

  async function reloadPhoto() {
    const asset = await (await api("GET", "/api/assets/" + id)).json();
    photo.src = shown.replace(/v=[0-9a-f]*/, "v=" + asset.version);
  }

  form.addEventListener("click", async (event) => {
    const act = event.target.closest("button")?.dataset.act;
    if (!act) return;
    try {
      if (act === "before") {
        status.textContent = "before";
        await preview([]);
        status.textContent = "before (move a slider to see the edit)";
      } else if (act === "save") {
        const list = filters();
        if (!list.length) { status.textContent = "nothing to save"; return; }
        status.textContent = "saving…";
        await api("POST", "/api/assets/" + id + "/edit", { filters: list, mode: "replace" });
        status.textContent = "saved";
        await reloadPhoto();
        await loadHistory();
      } else if (act === "revert") {
        status.textContent = "reverting…";
        await api("POST", "/api/assets/" + id + "/revert", {});
        status.textContent = "reverted";
        await reloadPhoto();
        await loadHistory();
      }
    } catch (error) {
      status.textContent = error.message;
    }
  });
  loadHistory();
}

document.addEventListener("DOMContentLoaded", () => {
  const main = document.querySelector("main");
  for (const img of document.querySelectorAll(".grid img, .albums img")) watchBroken(img);
  if (document.body.dataset.page === "album") albumPage(main);
  if (document.body.dataset.page === "asset") assetPage(main);
});
