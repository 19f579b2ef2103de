// An unlocked space's page: photos and videos added by the picker or dropped on the page, each
// sent to the space's upload route (encrypted as it arrives) with its progress. When all are
// in, the page is shown again with them; when any was refused, its reason stays on screen.

import { uploadFile } from "./api.js";

export function spacePage(main) {
  const button = main.querySelector('[data-act="upload"]');
  // A locked space's page has nothing to add to.
  if (!button) return;
  const picker = main.querySelector("#files");
  const panel = main.querySelector(".upload");
  const list = main.querySelector(".uploads");
  button.hidden = false;
  button.addEventListener("click", () => picker.click());
  // Files picked or dropped while others are on their way wait for no reload: the page is
  // shown again once the last batch ends, and only when none was refused.
  let running = 0, refused = false;
  const add = async (files) => {
    if (!files.length) return;
    panel.hidden = false;
    running++;
    for (const file of files) refused = !(await uploadFile(file, "/api/space/uploads", list)) || refused;
    picker.value = "";
    if (--running > 0) return;
    if (refused) main.querySelector(".upload .hint").hidden = false;
    else location.reload();
  };
  picker.addEventListener("change", (event) => add([...event.target.files]));
  document.addEventListener("dragover", (event) => { event.preventDefault(); document.body.classList.add("dragging"); });
  document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
  document.addEventListener("drop", (event) => {
    event.preventDefault();
    document.body.classList.remove("dragging");
    add([...event.dataTransfer.files]);
  });
}
