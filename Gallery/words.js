// Dates, sizes and lengths as the gallery says them, its icons, and an asset's addresses.

export const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
  "September", "October", "November", "December"];
export const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

// Seconds since 1970 on the clock where the photo was taken (its offset; none: as UTC).
export const localSeconds = (asset) => asset.sortDate + (asset.captureOffsetMinutes || 0) * 60;
export const localDate = (asset) => new Date(localSeconds(asset) * 1000);
export function monthLabel(key) {
  if (key === "0000-00") return "Undated";
  const [year, month] = key.split("-").map(Number);
  return MONTHS[month - 1] + " " + year;
}
export function dayLabel(asset) {
  const date = localDate(asset);
  return DAYS[date.getUTCDay()].slice(0, 3) + " " + date.getUTCDate() + " " + MONTHS[date.getUTCMonth()].slice(0, 3);
}
export function offsetText(minutes) {
  const sign = minutes < 0 ? "−" : "+";
  const whole = Math.abs(minutes);
  return "UTC" + sign + String(Math.floor(whole / 60)).padStart(2, "0") + ":" + String(whole % 60).padStart(2, "0");
}
export function bytesText(bytes) {
  if (bytes >= 1e9) return (bytes / 1e9).toFixed(1) + " GB";
  if (bytes >= 1e6) return (bytes / 1e6).toFixed(1) + " MB";
  return Math.max(1, Math.round(bytes / 1e3)) + " KB";
}
export function durationText(seconds) {
  const whole = Math.round(seconds || 0);
  return Math.floor(whole / 60) + ":" + String(whole % 60).padStart(2, "0");
}
// The name people know a program that edited a photo by (`foreignSettings.program`).
export const programName = (program) => program === "lightroom" ? "Lightroom" : program;

// An icon of the page's set (icons.mustache), for a control that also says its name (its
// text, or its aria-label): as markup, or as an element.
export const ICON = (name) => '<svg class="icon" aria-hidden="true"><use href="#i-' + name + '"/></svg>';
export function icon(name) {
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
export function assetURL(asset, rep, size) {
  const signature = asset.signed && asset.signed[rep];
  return "/api/assets/" + asset.id + "/" + rep + "?" + (size ? "size=" + size + "&" : "")
    + "v=" + asset.version + (signature ? "&e=" + asset.signed.expires + "&sig=" + signature : "");
}
// Formats every browser shows as they are; anything else is asked for as a rendition.
export const browserShows = (format) => ["jpeg", "png", "webp", "gif"].includes(format);
// A photo's page, seen from an album (`ref`), with what it opens on (`view=1`, `edit=1`).
export const assetPageURL = (id, ref, extra = "") =>
  "/asset/" + id + (ref ? "?ref=" + encodeURIComponent(ref) + extra : "");
