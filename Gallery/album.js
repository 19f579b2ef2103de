// An album's page (the library's timeline, a folder, a smart album, the trash): the
// timeline, the viewer over it, selection with batch jobs, albums and shared links, upload,
// "On this day", and the catalog's changes followed live.

import { api, csrf, followJob, uploadFile } from "./api.js";
import { watchBroken } from "./images.js";
import { Selection } from "./selection.js";
import { Timeline } from "./timeline.js";
import { Viewer } from "./viewer.js";
import { assetURL, localDate } from "./words.js";

const verbs = { apply: "Applying", revert: "Reverting", trash: "Moving to trash", restore: "Restoring" };

export class AlbumPage {
  constructor(main) {
    this.main = main;
    this.ref = decodeURIComponent(main.dataset.ref);
    this.notice = main.querySelector(".notice");
    // The page's search and filters: what the timeline shows, and what "all" means to a job.
    this.filters = {};
    try { this.filters = JSON.parse(main.dataset.filters || "{}"); } catch (_) { /* none */ }
    this.byDate = ["date", "-date"].includes(main.dataset.sort);
    this.items = Number(main.dataset.count);
    this.trashed = main.dataset.trash === "true";
    this.viewing = null; // the photo the viewer shows: its month is never forgotten
    this.retry = null;
    this.viewer = new Viewer();
    this.timeline = new Timeline(main, { ref: this.ref, filters: this.filters, byDate: this.byDate, page: this });
    this.selection = new Selection(main, this.timeline, this);
    const progress = main.querySelector(".progress");
    this.progress = { box: progress, bar: progress.querySelector("progress"),
      text: progress.querySelector(".progress-text"), failures: progress.querySelector(".failures") };
    this.wireSearch();
    this.wireActions();
    this.wireUpload();
    this.followChanges();
    this.start();
  }

  // ---- What the timeline and the selection ask of the page ---------------------------------

  paint(cell) { this.selection?.paint(cell); }
  held() { return [this.selection?.anchor, this.viewing]; }
  viewerOpen() { return this.viewer.isOpen(); }
  total() { return this.items; }
  loaded() { this.notice.hidden = true; }
  failed(error, again) { this.showNotice(error.offline ? "The server cannot be reached." : error.message, again); }
  open(id, push = true) { this.openViewer(id, push); }
  trash() { this.runJob("trash"); }
  counted(data) {
    this.setTotal(data.count);
    // Nothing to show: say why, rather than an empty page.
    let empty = this.main.querySelector(".empty-state");
    if (data.count === 0 && !empty && !this.main.querySelector(".subfolders")) {
      empty = document.createElement("p");
      empty.className = "empty-state";
      empty.textContent = Object.keys(this.filters).some((name) => name !== "sort")
        ? "Nothing matches this search." : this.trashed ? "The trash is empty."
          : "No photos here yet: drop some on this page, or use Upload.";
      this.timeline.container.before(empty);
    } else if (data.count > 0 && empty) {
      empty.remove();
    }
  }
  setTotal(count) {
    this.items = Math.max(0, count);
    this.main.dataset.count = String(this.items);
    // (Written only when it changes: it is read aloud.)
    // (A folder's own folders are counted by the page: they do not change here.)
    const folders = this.main.querySelectorAll(".subfolders li").length;
    const text = this.items + (this.items === 1 ? " item" : " items")
      + (folders ? " and " + folders + (folders === 1 ? " folder" : " folders") : "");
    const summary = this.main.querySelector(".summary");
    if (summary.textContent !== text) summary.textContent = text;
  }
  showNotice(text, again) {
    this.notice.querySelector("span").textContent = text;
    this.notice.hidden = false;
    this.retry = again;
  }

  // ---- Starting: the search form, the timeline, where the address says to be ----------------

  wireSearch() {
    // The address says only what was asked: empty fields and the album's own order left out.
    const search = this.main.querySelector(".search");
    search.addEventListener("submit", () => {
      for (const field of search.elements) {
        if (!field.name || field.type === "hidden") continue;
        const unchecked = field.type === "checkbox" && !field.checked;
        if (field.value === "" || unchecked || field.value === field.dataset.default) field.disabled = true;
      }
    });
    addEventListener("pageshow", () => { for (const field of search.elements) field.disabled = false; });
    history.scrollRestoration = "manual";
    this.notice.querySelector("button").addEventListener("click", () => { this.notice.hidden = true; this.retry?.(); });
  }
  start() {
    const timeline = this.timeline;
    timeline.measure();
    this.selection.repaint();
    timeline.scrubber.style.top = Math.max(8, timeline.containerTop()) + "px";
    timeline.reload().then(() => {
      const at = new URLSearchParams(location.search).get("at");
      if (this.main.dataset.open) this.reopenViewer(this.main.dataset.open).catch(() => {});
      else if (at && this.byDate) timeline.jump(at);
      else this.showMemories().catch(() => {});
      timeline.schedule();
    }).catch((error) => this.failed(error, () => location.reload()));
  }
  async refresh(changed = null) {
    try { await this.timeline.reload(changed); } catch (error) { this.showNotice(error.message, () => this.refresh()); }
  }
  // Live: the catalog's changes (another window, a scan, an upload) update the counts and
  // the months on the screen, a moment after the last one. (At most one refresh a second: a
  // scan's thousands of changes do not hold it back.)
  followChanges() {
    let waiting = null, changedIDs = new Set();
    const feed = new EventSource("/api/changes");
    feed.addEventListener("change", (event) => {
      try { changedIDs.add(JSON.parse(event.data).id); } catch (_) { /* counts still checked */ }
      if (waiting) return;
      waiting = setTimeout(() => {
        const ids = changedIDs;
        waiting = null;
        changedIDs = new Set();
        this.refresh(ids);
      }, 1000);
    });
    addEventListener("pagehide", () => feed.close());
  }

  // On this day: photos taken on today's date (the reader's) in earlier years, a card a year
  // above the timeline of everything; each leads to that day's photos of that year.
  async showMemories() {
    if (this.ref !== "smart:all" || Object.keys(this.filters).some((name) => name !== "sort")) return;
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
    if (!years.size || this.main.querySelector(".memories")) return;
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
    this.timeline.container.before(section);
    this.timeline.scrubber.style.top = Math.max(8, this.timeline.containerTop()) + "px";
    this.timeline.schedule();
  }

  // ---- The viewer ------------------------------------------------------------------------

  openViewer(id, push = true) {
    const asset = this.timeline.asset(id);
    if (!asset) return;
    this.viewing = id;
    const timeline = this.timeline;
    this.viewer.open(asset, {
      ref: this.ref, trash: this.trashed,
      neighbour: (asset, direction) => timeline.neighbour(asset, direction),
      removed: () => this.refresh(),
      moved: (asset) => { timeline.active = this.viewing = asset.id; },
      closed: (asset) => { this.viewing = null; if (asset) timeline.bring(asset.id, true); },
      reopen: (id) => { if (timeline.locate(id)) this.openViewer(id, false); else return false; },
    }, push);
  }
  // The viewer's address reloaded: the album's own address under it (Back and Escape return
  // there), the photo's month read, the viewer open on it.
  async reopenViewer(id) {
    const timeline = this.timeline;
    history.replaceState(null, "", this.ref === "smart:all" ? "/" : "/album?ref=" + encodeURIComponent(this.ref));
    if (!timeline.locate(id)) {
      const asset = await (await api("GET", "/api/assets/" + encodeURIComponent(id))).json();
      const date = localDate(asset);
      const key = this.byDate ? date.getUTCFullYear() + "-" + String(date.getUTCMonth() + 1).padStart(2, "0") : null;
      if (key) timeline.jump(key);
      for (const s of timeline.sections) {
        if (key && s.key !== key) continue;
        await timeline.loadAll(s);
        if (timeline.locate(id)) break;
      }
    }
    if (timeline.locate(id)) this.openViewer(id);
  }
  // A slideshow from the first of what the page shows, in its order.
  async startSlideshow() {
    const first = this.timeline.sections[0];
    if (!first) return;
    if (!first.assets.length) await this.timeline.load(first);
    if (!first.assets.length) return;
    this.openViewer(first.assets[0].id);
    this.viewer.play(true);
  }

  // ---- Jobs: progress from the job's events; the timeline follows from the catalog's changes

  target() { return this.selection.target(this.ref, this.filters); }
  say(text) {
    this.progress.box.hidden = false;
    this.progress.failures.textContent = "";
    this.progress.text.textContent = text;
  }
  async runJob(action) {
    if (this.selection.count() === 0) return;
    const body = Object.assign({ action }, this.target());
    if (action === "apply") body.filters = [this.main.querySelector("#preset").value];
    const { bar, text, failures } = this.progress;
    this.say(verbs[action] + "…");
    let job;
    try {
      job = await (await api("POST", "/api/jobs", body)).json();
    } catch (error) {
      text.textContent = error.message;
      return;
    }
    const show = (status) => {
      bar.max = Math.max(1, status.total);
      bar.value = status.done + status.failed;
      text.textContent = verbs[action] + " " + (status.done + status.failed) + "/" + status.total
        + (status.failed ? " (" + status.failed + " failed)" : "");
    };
    const status = await followJob(job, show);
    show(status);
    text.textContent += status.failed ? "" : " · done";
    for (const failure of status.failures) {
      const item = document.createElement("li");
      item.textContent = failure.id + ": " + failure.error;
      failures.append(item);
    }
    if (action === "trash" || action === "restore") this.selection.clear();
    await this.refresh();
  }
  // Emptying the trash deletes files for good: asked first, and said how many went.
  async emptyTrash() {
    if (!confirm("Delete the " + this.items + " photos in the trash for good? This cannot be undone.")) return;
    this.say("");
    try {
      const emptied = await (await api("POST", "/api/trash/empty")).json();
      this.progress.text.textContent = "Emptied: " + emptied.assets.length + " deleted for good";
      this.selection.clear();
      await this.refresh();
    } catch (error) {
      this.progress.text.textContent = error.message;
    }
  }
  download() {
    if (this.selection.count() === 0) return;
    const form = document.createElement("form");
    form.method = "post";
    form.action = "/api/download";
    const fields = { csrf };
    const t = this.target();
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

  // ---- Albums: add the selection to a new or existing one; rename this one; take out of it;
  // share it.

  // The dialog opens at once; the albums there are listed when they arrive.
  addToAlbum() {
    if (this.selection.count() === 0) return;
    const dialog = this.main.querySelector(".album-dialog");
    dialog.querySelector(".dialog-error").textContent = "";
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
        await api("POST", "/api/albums", Object.assign({ op: "add", title }, this.target()));
        dialog.close();
        this.say("");
        const link = document.createElement("a");
        link.href = "/album?ref=" + encodeURIComponent(title);
        link.textContent = title;
        this.progress.text.append("Added " + this.selection.count() + " to ", link);
        this.selection.clear();
      } catch (error) {
        dialog.querySelector(".dialog-error").textContent = error.message;
      }
    };
  }
  async renameAlbum() {
    const title = prompt("A new title for " + this.ref, this.ref);
    if (!title || title === this.ref) return;
    try {
      await api("POST", "/api/albums", { op: "rename", title: this.ref, newTitle: title });
      location.href = "/album?ref=" + encodeURIComponent(title);
    } catch (error) {
      this.showNotice(error.message, null);
    }
  }
  // A user album deleted, once confirmed: its photos stay in the library (and in others).
  async deleteAlbum() {
    if (!confirm("Delete the album " + this.ref + "? Its photos stay in the library.")) return;
    try {
      await api("POST", "/api/albums", { op: "delete", title: this.ref });
      location.href = "/albums";
    } catch (error) {
      this.showNotice(error.message, null);
    }
  }
  async removeFromAlbum() {
    try {
      await api("POST", "/api/albums", Object.assign({ op: "remove", title: this.ref }, this.target()));
      this.selection.clear();
      await this.refresh();
    } catch (error) {
      this.showNotice(error.message, null);
    }
  }
  // Links that show this album to whoever has them: made (the link shown once), listed with
  // their visits, revoked.
  async listShares(dialog) {
    const list = dialog.querySelector(".share-links");
    list.textContent = "";
    const { links } = await (await api("GET", "/api/shares?album=" + encodeURIComponent(this.ref))).json();
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
          await this.listShares(dialog);
        } catch (error) {
          dialog.querySelector(".dialog-error").textContent = error.message;
        }
      });
      item.append(revoke);
      list.append(item);
    }
  }
  shareAlbum() {
    const dialog = this.main.querySelector(".share-dialog");
    const form = dialog.querySelector("form");
    const problem = (error) => { dialog.querySelector(".dialog-error").textContent = error.message; };
    form.reset();
    dialog.querySelector(".share-made").hidden = true;
    dialog.querySelector(".dialog-error").textContent = "";
    dialog.showModal();
    this.listShares(dialog).catch(problem);
    form.onsubmit = async (event) => {
      event.preventDefault();
      const body = { album: this.ref, download: form.elements.download.checked };
      if (form.elements.days.value) body.days = Number(form.elements.days.value);
      if (form.elements.password.value) body.password = form.elements.password.value;
      try {
        const made = await (await api("POST", "/api/shares", body)).json();
        const url = dialog.querySelector(".share-url");
        url.value = location.origin + made.url;
        dialog.querySelector(".share-made").hidden = false;
        url.focus();
        url.select();
        await this.listShares(dialog);
      } catch (error) {
        problem(error);
      }
    };
  }

  // The selection's toolbar and the album's own actions.
  wireActions() {
    const main = this.main;
    const dialog = main.querySelector(".album-dialog");
    dialog.querySelector('[data-act="cancel"]').addEventListener("click", () => dialog.close());
    const shareDialog = main.querySelector(".share-dialog");
    shareDialog?.querySelector('[data-act="close-share"]').addEventListener("click", () => shareDialog.close());
    main.querySelector(".toolbar").addEventListener("click", (event) => {
      const act = event.target.closest("button")?.dataset.act;
      if (!act) return;
      if (act === "clear") this.selection.clear();
      else if (act === "download") this.download();
      else if (act === "album") this.addToAlbum();
      else if (act === "unalbum") this.removeFromAlbum();
      else this.runJob(act);
    });
    const actions = main.querySelector(".album-actions");
    for (const element of actions.children) element.hidden = false;
    actions.addEventListener("click", (event) => {
      const act = event.target.closest("button")?.dataset.act;
      if (act === "select-all") this.selection.selectAll();
      if (act === "slideshow") this.startSlideshow();
      else if (act === "rename") this.renameAlbum();
      else if (act === "share") this.shareAlbum();
      else if (act === "delete-album") this.deleteAlbum();
      else if (act === "upload") main.querySelector("#files").click();
      else if (act === "empty") this.emptyTrash();
    });
  }

  // ---- Upload: a file picker, or files dropped anywhere on the page; each with its progress

  upload(file) {
    this.main.querySelector(".upload").hidden = false;
    return uploadFile(file, "/api/uploads", this.main.querySelector(".uploads"));
  }
  wireUpload() {
    const picker = this.main.querySelector("#files");
    picker.addEventListener("change", async (event) => {
      for (const file of event.target.files) await this.upload(file);
      picker.value = "";
      await this.refresh();
    });
    if (this.trashed) return;
    document.addEventListener("dragover", (event) => { event.preventDefault(); document.body.classList.add("dragging"); });
    document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
    document.addEventListener("drop", async (event) => {
      event.preventDefault();
      document.body.classList.remove("dragging");
      for (const file of event.dataTransfer.files) await this.upload(file);
      await this.refresh();
    });
  }
}
