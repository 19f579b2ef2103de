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
  const add = async (files) => {
    if (!files.length) return;
    panel.hidden = false;
    let all = true;
    for (const file of files) all = (await uploadFile(file, "/api/space/uploads", list)) && all;
    picker.value = "";
    if (all) location.reload();
    else main.querySelector(".upload .hint").hidden = false;
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
