// Duplicates: keep one of each group, the rest to the trash.

import { runToEnd } from "./api.js";

export function duplicatesPage(main) {
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
      await runToEnd({ action: "trash", ids });
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
