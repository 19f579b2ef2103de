// The viewer's editor: every tool of the filter graph, grouped as Photos groups them (Light,
// Color, Black & White, Detail, Vignette; crop, straighten, rotate, flip and perspective
// over the photo; a video's trim), built from the filters' own declarations (GET
// /api/filters). The preview is the server's: the graph applied to the original's cached
// screen rendition. A module of its own, loaded by the asset page only.

import { api, followJob } from "./api.js";
import { icon } from "./words.js";

// The asset page's photo and its editor: none for a damaged file, which is shown as far as
// it decodes, not edited. (The module's own scope holds the editor's state: one a page.)
const main = document.querySelector("main.viewer:not([data-damaged])");
const id = main?.dataset.id;
// The asset routes: the library's, or an unlocked space's (which keeps no jobs: a video's
// edit there is one request, without progress).
const assets = main?.dataset.api || "/api/assets";
const inSpace = main?.dataset.space === "true";
const form = main?.querySelector(".editor");
const photo = main?.querySelector(".photo");
const figure = main?.querySelector("figure");
const opener = main?.querySelector(".open-editor");
const shown = photo?.src;

// The sliders, by group: [filter, parameter, label]. A filter is written when one of its
// leading parameters is away from where it changes nothing.
const groups = [
  ["Light", [
    ["tone", "exposure", "Exposure"], ["light", "brilliance", "Brilliance"],
    ["tone", "highlights", "Highlights"], ["tone", "shadows", "Shadows"],
    ["tone", "contrast", "Contrast"], ["tone", "brightness", "Brightness"],
    ["light", "blacks", "Black point"], ["light", "whites", "White point"],
  ]],
  ["Color", [
    ["tone", "saturation", "Saturation"], ["vibrance", "amount", "Vibrance"],
    ["balance", "temperature", "Temperature"], ["balance", "tint", "Tint"],
    ["tone", "warmth", "Warmth"],
  ]],
  ["Black & White", [["noir", "intensity", "Intensity"]]],
  ["Detail", [
    ["sharpen", "amount", "Sharpness"], ["definition", "amount", "Definition"],
    ["texture", "amount", "Texture"], ["denoise", "luminance", "Noise reduction"],
    ["denoise", "colour", "Colour noise"],
  ]],
  ["Vignette", [
    ["vignette", "amount", "Strength"], ["vignette", "midpoint", "Radius"],
    ["vignette", "feather", "Softness"],
  ]],
];
// Where each slider changes nothing; secondary ones (a vignette's radius) never lead.
const neutral = { "balance.temperature": 6500, "vignette.midpoint": 0.5, "vignette.feather": 0.5 };
const secondary = new Set(["vignette.midpoint", "vignette.feather"]);
// Sliders whose range is the asset's, not the filter's: [min, max, step].
const span = {};
// The order filters are written in: geometry first (a crop is of the turned image), then
// light and colour, detail, and what depends on the frame last.
const order = ["trim", "perspective", "rotate", "flip", "crop", "balance", "tone", "light",
  "curve", "vibrance", "hsl", "noir", "definition", "texture", "denoise", "sharpen", "vignette"];

let catalog = null;
const sliders = new Map();  // "filter.parameter" -> input
const geometry = { turns: 0, flipH: false, flipV: false, aspect: "", angle: 0, crop: null,
  vertical: 0, horizontal: 0 };
let extra = [];  // filters this panel has no control for (grain, warp), kept as they are
let leading = [];  // those of them before every filter it controls (a warp the crop is of)
// Colour ranges (the hsl filter): "blue-saturation" -> value; the range the sliders show.
// (Each swatch's colour is the stylesheet's: the page allows no inline style.)
const hslRanges = ["red", "orange", "yellow", "green", "aqua", "blue", "purple", "magenta"];
const hsl = {};
let showHSL = () => {};
// Curves (the curve filter): each channel's points [x, y], x rising, 0 to 1.
const curveChannels = [["rgb", "RGB"], ["red", "Red"], ["green", "Green"], ["blue", "Blue"]];
const straight = () => [[0, 0], [1, 1]];
const curves = { rgb: straight(), red: straight(), green: straight(), blue: straight() };
let drawCurve = () => {};
let cropping = false;
let isVideo = false;

const element = (tag, attributes = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
};
const status = element("span", { class: "status", role: "status", "aria-live": "polite" });
const history = element("ol", { class: "history" });

async function build() {
  catalog = (await (await api("GET", "/api/filters")).json()).filters;
  const parameter = (filter, name) =>
    catalog.find((f) => f.name === filter)?.parameters.find((p) => p.name === name);
  form.textContent = "";
  const top = element("div", { class: "actions" },
    element("button", { type: "button", "data-act": "auto" }, icon("auto"), "Auto"),
    element("button", { type: "button", "data-act": "before", "aria-label": "Hold to see the original",
      title: "Hold to see the original" }, icon("compare"), "Compare"),
    element("button", { type: "button", "data-act": "revert" }, icon("revert"), "Revert"),
    element("button", { type: "button", "data-act": "save", text: "Save" }),
    status);
  form.append(top, geometryGroup());
  // A video's part in time: from start to end, in seconds (the end at its length: all).
  const asset = await (await api("GET", assets + "/" + id)).json().catch(() => ({}));
  const shownGroups = [...groups];
  isVideo = asset.mediaType === "video";
  if (isVideo && asset.duration > 0) {
    neutral["trim.end"] = Math.round(asset.duration * 10) / 10;
    span["trim.start"] = span["trim.end"] = [0, neutral["trim.end"], 0.1];
    shownGroups.unshift(["Trim", [["trim", "start", "Start (s)"], ["trim", "end", "End (s)"]]]);
  }
  for (const [title, entries] of shownGroups) {
    const body = element("div", { class: "sliders" });
    for (const [filter, name, label] of entries) {
      const p = parameter(filter, name);
      if (!p) continue;
      const key = filter + "." + name;
      const width = p.max - p.min;
      const [min, max, step] = span[key] ?? [p.min, p.max, width > 100 ? 50 : width > 4 ? 0.05 : 0.01];
      const input = element("input", { id: "edit-" + filter + "-" + name, type: "range",
        min: String(min), max: String(max), step: String(step),
        value: String(neutral[key] ?? 0), "data-key": key });
      input.title = p.doc;
      sliders.set(key, input);
      body.append(...row(input, label, neutral[key] ?? 0));
    }
    form.append(group(title, body, () => {
      for (const [filter, name] of entries) resetSlider(filter + "." + name);
    }));
    if (title === "Black & White" && asset.mediaType !== "video") form.append(curvesGroup(), hslGroup());
  }
  form.append(element("h3", { text: "History" }), history);
}

// A slider's row: its name, the track (filled from where it changes nothing to its value),
// the value beside it, and its own reset, shown once it is moved. The track and the value
// follow every "input" event; a value set without one is shown by `paintAll`.
function row(input, label, rest, reset = () => {
  input.value = String(rest);
  input.dispatchEvent(new Event("input"));
}) {
  const output = element("output", { for: input.id, text: input.value });
  const button = element("button", { type: "button", class: "slider-reset", "aria-label": "Reset " + label,
    title: "Reset " + label }, icon("reset"));
  input.dataset.rest = String(rest);
  input.addEventListener("input", () => paint(input));
  button.addEventListener("click", () => { reset(); paint(input); changed(); });
  paint(input, output, button);
  return [element("label", { for: input.id, text: label }), input, output, button];
}
function paint(input, output = input.nextElementSibling, button = output?.nextElementSibling) {
  const min = Number(input.min), max = Number(input.max), value = Number(input.value);
  const at = (v) => ((Math.min(max, Math.max(min, v)) - min) / (max - min || 1)) * 100 + "%";
  const rest = Number(input.dataset.rest ?? 0);
  input.style.setProperty("--from", at(Math.min(rest, value)));
  input.style.setProperty("--to", at(Math.max(rest, value)));
  if (output) output.value = input.value;
  button?.classList.toggle("moved", value !== rest);
}
const paintAll = () => { for (const input of form.querySelectorAll(".sliders input[type=range]")) paint(input); };

// A group: a heading with its reset, then its controls.
function group(title, body, reset) {
  const resetButton = element("button", { type: "button", class: "reset", text: "Reset",
    "aria-label": "Reset " + title });
  resetButton.addEventListener("click", () => { reset(); changed(); });
  return element("section", { class: "group", "aria-label": title },
    element("div", { class: "group-head" }, element("h3", { text: title }), resetButton), body);
}

function resetSlider(key) {
  const input = sliders.get(key);
  if (!input) return;
  input.value = String(neutral[key] ?? 0);
  input.dispatchEvent(new Event("input"));
}

// Colour ranges: a swatch for each of the hsl filter's eight ranges, and the chosen one's
// hue, saturation and luminance.
function hslGroup() {
  const body = element("div", { class: "hsl" });
  const swatches = element("div", { class: "swatches", role: "radiogroup",
    "aria-label": "Colour range" });
  for (const name of hslRanges) {
    swatches.append(element("button", { type: "button", role: "radio", "data-range": name,
      "aria-label": name, title: name }));
  }
  let range = "red", showing = false;
  const rows = element("div", { class: "sliders" });
  const inputs = [];
  for (const [part, label] of [["hue", "Hue"], ["saturation", "Saturation"], ["luminance", "Luminance"]]) {
    const input = element("input", { id: "edit-hsl-" + part, type: "range", min: "-1", max: "1",
      step: "0.01", value: "0" });
    input.addEventListener("input", () => {
      if (!showing) hsl[range + "-" + part] = Number(input.value);
    });
    const parts = row(input, label, 0, () => {
      delete hsl[range + "-" + part];
      showHSL();
    });
    inputs.push([part, input]);
    rows.append(...parts);
  }
  showHSL = () => {
    showing = true;
    for (const swatch of swatches.children) {
      swatch.setAttribute("aria-checked", String(swatch.dataset.range === range));
      swatch.classList.toggle("changed", ["hue", "saturation", "luminance"]
        .some((part) => (hsl[swatch.dataset.range + "-" + part] ?? 0) !== 0));
    }
    for (const [part, input] of inputs) {
      input.value = String(hsl[range + "-" + part] ?? 0);
      paint(input);
    }
    showing = false;
  };
  swatches.addEventListener("click", (event) => {
    const swatch = event.target.closest("[data-range]");
    if (!swatch) return;
    range = swatch.dataset.range;
    showHSL();
  });
  rows.addEventListener("input", () => showHSL());
  body.append(swatches, rows);
  showHSL();
  return group("Color ranges", body, () => {
    for (const key of Object.keys(hsl)) delete hsl[key];
    showHSL();
  });
}

// Curves: a channel, and its curve through points over the square of input (across) and
// output (up). Drag a point; press on the curve's square to add one there; Delete (or a
// double click) removes one; a focused point moves by the arrow keys.
function curvesGroup() {
  const svgNS = "http://www.w3.org/2000/svg";
  const make = (tag, attributes) => {
    const node = document.createElementNS(svgNS, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    return node;
  };
  const select = element("select", { id: "edit-curve-channel", "aria-label": "Curve channel" });
  for (const [value, text] of curveChannels) select.append(element("option", { value, text }));
  const svg = make("svg", { viewBox: "-4 -4 108 108", class: "curve", role: "group",
    "aria-label": "Curve: drag a point, press the square to add one, Delete removes one" });
  for (const at of [25, 50, 75]) {
    svg.append(make("line", { x1: at, y1: 0, x2: at, y2: 100, class: "grid" }),
      make("line", { x1: 0, y1: at, x2: 100, y2: at, class: "grid" }));
  }
  svg.append(make("rect", { x: 0, y: 0, width: 100, height: 100, class: "frame" }),
    make("line", { x1: 0, y1: 100, x2: 100, y2: 0, class: "grid" }));
  const path = make("path", { class: "line" });
  const dots = make("g", {});
  svg.append(path, dots);
  const points = () => curves[select.value];
  const toSquare = (event) => {
    const box = svg.getBoundingClientRect();
    const x = ((event.clientX - box.left) / box.width) * 108 - 4;
    const y = ((event.clientY - box.top) / box.height) * 108 - 4;
    return [Math.min(1, Math.max(0, x / 100)), Math.min(1, Math.max(0, 1 - y / 100))];
  };
  // A point moved within its neighbours (x rising by at least 0.01).
  const place = (index, x, y) => {
    const list = points();
    const low = index > 0 ? list[index - 1][0] + 0.01 : 0;
    const high = index < list.length - 1 ? list[index + 1][0] - 0.01 : 1;
    // Between neighbours closer than that (a curve written elsewhere), x stays.
    const across = low <= high ? Math.round(Math.min(high, Math.max(low, x)) * 1000) / 1000
      : list[index][0];
    list[index] = [across, Math.round(Math.min(1, Math.max(0, y)) * 1000) / 1000];
  };
  let dragging = null, focusAfter = null;
  drawCurve = () => {
    const list = points();
    const ys = monotone(list, 65);
    path.setAttribute("class", "line " + select.value);
    path.setAttribute("d", ys.map((y, i) => (i ? "L" : "M") + (i * 100 / 64).toFixed(2) + " " +
      (100 - y * 100).toFixed(2)).join(" "));
    dots.textContent = "";
    list.forEach(([x, y], index) => {
      const dot = make("circle", { cx: x * 100, cy: 100 - y * 100, r: 3.5, class: "point",
        tabindex: "0", role: "slider", "data-index": String(index),
        "aria-label": "Point " + (index + 1) + " of " + list.length,
        "aria-valuemin": "0", "aria-valuemax": "100", "aria-valuenow": String(Math.round(y * 100)),
        "aria-valuetext": "in " + Math.round(x * 100) + "%, out " + Math.round(y * 100) + "%" });
      dots.append(dot);
    });
    if (focusAfter !== null) {
      dots.children[focusAfter]?.focus();
      focusAfter = null;
    }
  };
  const remove = (index) => {
    const list = points();
    if (index <= 0 || index >= list.length - 1) return;  // the ends stay
    list.splice(index, 1);
    drawCurve();
    changed();
  };
  svg.addEventListener("pointerdown", (event) => {
    event.preventDefault();
    const dot = event.target.closest("circle.point");
    let index;
    if (dot) {
      index = Number(dot.dataset.index);
    } else {
      const [x] = toSquare(event);
      const list = points();
      if (list.length >= 16) return;
      index = list.findIndex(([px]) => px > x);
      if (index <= 0) return;  // not beside the ends' own places
      if (x - list[index - 1][0] < 0.02 || list[index][0] - x < 0.02) return;
      list.splice(index, 0, [x, monotone(list, 1001)[Math.round(x * 1000)]]);
    }
    dragging = index;
    svg.setPointerCapture(event.pointerId);
    focusAfter = index;
    drawCurve();
  });
  svg.addEventListener("pointermove", (event) => {
    if (dragging === null) return;
    const [x, y] = toSquare(event);
    place(dragging, x, y);
    drawCurve();
  });
  const stop = () => {
    if (dragging === null) return;
    dragging = null;
    changed();
  };
  svg.addEventListener("pointerup", stop);
  svg.addEventListener("pointercancel", stop);
  svg.addEventListener("dblclick", (event) => {
    const dot = event.target.closest("circle.point");
    if (dot) remove(Number(dot.dataset.index));
  });
  svg.addEventListener("keydown", (event) => {
    const dot = event.target.closest("circle.point");
    if (!dot) return;
    const index = Number(dot.dataset.index);
    const [x, y] = points()[index];
    const step = event.shiftKey ? 0.05 : 0.01;
    const moves = { ArrowUp: [0, step], ArrowDown: [0, -step], ArrowLeft: [-step, 0],
      ArrowRight: [step, 0] };
    if (event.key === "Delete" || event.key === "Backspace") {
      event.preventDefault();
      if (index > 0 && index < points().length - 1) focusAfter = index - 1;
      remove(index);
    } else if (moves[event.key]) {
      event.preventDefault();
      event.stopPropagation();
      place(index, x + moves[event.key][0], y + moves[event.key][1]);
      focusAfter = index;
      drawCurve();
      changed();
    }
  });
  select.addEventListener("change", () => drawCurve());
  const body = element("div", { class: "curves" }, select, svg);
  drawCurve();
  return group("Curves", body, () => {
    for (const [channel] of curveChannels) curves[channel] = straight();
    drawCurve();
  });
}

// A curve through points, monotone between them (Fritsch and Carlson's cubic, as the
// server's curve filter draws it), flat beyond the ends: `samples` values over 0 to 1.
function monotone(list, samples) {
  const n = list.length;
  const slopes = [];
  for (let i = 0; i < n - 1; i++) slopes.push((list[i + 1][1] - list[i][1]) / (list[i + 1][0] - list[i][0]));
  const tangents = new Array(n).fill(0);
  tangents[0] = slopes[0];
  tangents[n - 1] = slopes[n - 2];
  for (let i = 1; i < n - 1; i++) {
    tangents[i] = slopes[i - 1] * slopes[i] <= 0 ? 0 : (slopes[i - 1] + slopes[i]) / 2;
  }
  for (let i = 0; i < n - 1; i++) {
    if (slopes[i] === 0) { tangents[i] = tangents[i + 1] = 0; continue; }
    const a = tangents[i] / slopes[i], b = tangents[i + 1] / slopes[i], h = a * a + b * b;
    if (h > 9) {
      const t = 3 / Math.sqrt(h);
      tangents[i] = t * a * slopes[i];
      tangents[i + 1] = t * b * slopes[i];
    }
  }
  const out = [];
  let segment = 0;
  for (let index = 0; index < samples; index++) {
    const x = index / (samples - 1);
    if (x <= list[0][0]) { out.push(list[0][1]); continue; }
    if (x >= list[n - 1][0]) { out.push(list[n - 1][1]); continue; }
    while (x > list[segment + 1][0]) segment++;
    const [x0, y0] = list[segment], [x1, y1] = list[segment + 1];
    const h = x1 - x0, t = (x - x0) / h, t2 = t * t, t3 = t2 * t;
    const y = (2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * h * tangents[segment] +
      (-2 * t3 + 3 * t2) * y1 + (t3 - t2) * h * tangents[segment + 1];
    out.push(Math.min(1, Math.max(0, y)));
  }
  return out;
}

function geometryGroup() {
  const body = element("div", { class: "geometry" });
  const button = (act, name, label, text) =>
    element("button", { type: "button", "data-geometry": act, "aria-label": label, title: label },
      icon(name), ...(text ? [text] : []));
  const tools = element("div", { class: "tools" },
    button("left", "rotate-left", "Rotate left"), button("right", "rotate-right", "Rotate right"),
    button("flip-h", "flip-h", "Flip horizontally"), button("flip-v", "flip-v", "Flip vertically"),
    button("crop", "crop", "Crop with handles", "Crop"));
  const aspect = element("select", { id: "edit-aspect", "aria-label": "Aspect" });
  for (const [value, text] of [["", "Free"], ["1:1", "Square"], ["4:5", "4:5"], ["3:2", "3:2"],
    ["4:3", "4:3"], ["16:9", "16:9"], ["5:4", "5:4"], ["2:3", "2:3"], ["9:16", "9:16"]]) {
    aspect.append(element("option", { value, text }));
  }
  const dial = (key, label, min, max, step) => {
    const input = element("input", { id: "edit-" + key, type: "range", min: String(min),
      max: String(max), step: String(step), value: "0", "data-geometry-value": key });
    input.addEventListener("input", () => {
      geometry[key] = Number(input.value);
    });
    return row(input, label, 0);
  };
  const rows = element("div", { class: "sliders" },
    element("label", { for: "edit-aspect", text: "Aspect" }), aspect, element("span"), element("span"),
    ...dial("angle", "Straighten", -45, 45, 0.1),
    ...dial("vertical", "Vertical", -1, 1, 0.01),
    ...dial("horizontal", "Horizontal", -1, 1, 0.01));
  aspect.addEventListener("change", () => {
    geometry.aspect = aspect.value;
    if (geometry.crop && geometry.aspect) geometry.crop = fitAspect(geometry.crop);
    drawFrame();
  });
  tools.addEventListener("click", (event) => {
    const act = event.target.closest("button")?.dataset.geometry;
    if (!act) return;
    if (act === "left" || act === "right") {
      geometry.turns = (geometry.turns + (act === "right" ? 1 : 3)) % 4;
      geometry.crop = null;  // a crop is of the turned image: it starts again
    } else if (act === "flip-h") {
      geometry.flipH = !geometry.flipH;
    } else if (act === "flip-v") {
      geometry.flipV = !geometry.flipV;
    } else if (act === "crop") {
      setCropping(!cropping);
      return;
    }
    changed();
  });
  body.append(tools, rows);
  return group("Crop & straighten", body, () => {
    Object.assign(geometry, { turns: 0, flipH: false, flipV: false, aspect: "", angle: 0,
      crop: null, vertical: 0, horizontal: 0 });
    aspect.value = "";
    for (const input of body.querySelectorAll("input[type=range]")) {
      input.value = "0";
      input.dispatchEvent(new Event("input"));
    }
  });
}

// ---- The graph, both ways ----------------------------------------------------------------

const number = (value) => String(Math.round(value * 10000) / 10000);

// The filters the panel shows, written as `--filter` takes them.
function filters({ withCrop = true } = {}) {
  const byFilter = new Map();
  for (const [key, input] of sliders) {
    const [filter, name] = key.split(".");
    if (!byFilter.has(filter)) byFilter.set(filter, { lead: false, params: [] });
    const entry = byFilter.get(filter);
    const value = Number(input.value);
    if (!secondary.has(key) && value !== (neutral[key] ?? 0)) entry.lead = true;
    entry.params.push(name + "=" + number(value));
  }
  const written = new Map();
  for (const [filter, entry] of byFilter) {
    if (entry.lead) written.set(filter, filter + " " + entry.params.join(" "));
  }
  const bent = curveChannels.map(([channel]) => channel).filter((channel) =>
    curves[channel].some(([x, y]) => x !== y));
  if (bent.length) {
    const exact = (value) => String(Math.round(value * 1e6) / 1e6);
    written.set("curve", "curve " + bent.map((channel) => channel + "=" +
      curves[channel].map(([x, y]) => exact(x) + ":" + exact(y)).join(",")).join(" "));
  }
  const ranges = Object.entries(hsl).filter(([, value]) => value !== 0).sort();
  if (ranges.length) {
    written.set("hsl", "hsl " + ranges.map(([name, value]) => name + "=" + number(value)).join(" "));
  }
  if (geometry.vertical || geometry.horizontal) {
    written.set("perspective", "perspective vertical=" + number(geometry.vertical) +
      " horizontal=" + number(geometry.horizontal));
  }
  if (geometry.turns) written.set("rotate", "rotate angle=" + 90 * geometry.turns);
  const flips = [];
  if (geometry.flipH) flips.push("flip direction=horizontal");
  if (geometry.flipV) flips.push("flip direction=vertical");
  if (flips.length) written.set("flip", flips.join("\u0000"));
  const angle = geometry.angle ? " angle=" + number(geometry.angle) : "";
  if (withCrop && geometry.crop) {
    const c = geometry.crop;
    written.set("crop", "crop x=" + number(c.x) + " y=" + number(c.y) + " width=" +
      number(c.width) + " height=" + number(c.height) + angle);
  } else if (withCrop && geometry.aspect) {
    written.set("crop", "crop aspect=" + geometry.aspect + angle);
  } else if (geometry.angle) {
    written.set("crop", "crop" + angle);
  }
  const list = [];
  for (const filter of order) {
    if (written.has(filter)) list.push(...written.get(filter).split("\u0000"));
  }
  // Filters with no control here stay where they were: first (a warp, whose result the
  // crop and turns are of) or after the panel's.
  return leading.concat(list, extra);
}

// A node of a stored graph as `--filter` takes it.
const nodeText = (node) => [node.op, ...Object.entries(node.params || {})
  .filter(([, value]) => value !== null && value !== undefined)
  .map(([name, value]) => name + "=" + value)].join(" ");

// The panel set from a graph (the current version's).
function setFrom(nodes) {
  settingUp = true;
  try { setPanel(nodes); } finally { settingUp = false; }
  drawFrame();
}

function setPanel(nodes) {
  for (const key of sliders.keys()) resetSlider(key);
  Object.assign(geometry, { turns: 0, flipH: false, flipV: false, aspect: "", angle: 0,
    crop: null, vertical: 0, horizontal: 0 });
  extra = [];
  leading = [];
  for (const key of Object.keys(hsl)) delete hsl[key];
  for (const [channel] of curveChannels) curves[channel] = straight();
  let controlled = false;  // a filter the panel controls has come
  for (const node of nodes) {
    const extras = extra.length;
    const params = node.params || {};
    if (node.op === "hsl" && !nodes.some((other) => other !== node && other.op === "hsl")) {
      for (const [name, value] of Object.entries(params)) {
        if (value !== null && value !== undefined && Number(value) !== 0) hsl[name] = Number(value);
      }
    } else if (node.op === "curve" && !nodes.some((other) => other !== node && other.op === "curve")) {
      for (const [channel] of curveChannels) {
        if (typeof params[channel] === "string") {
          curves[channel] = params[channel].split(",").map((pair) => pair.split(":").map(Number));
        }
      }
    } else if (node.op === "rotate") geometry.turns = (geometry.turns + Number(params.angle ?? 90) / 90) % 4;
    else if (node.op === "flip") {
      if ((params.direction ?? "horizontal") === "horizontal") geometry.flipH = !geometry.flipH;
      else geometry.flipV = !geometry.flipV;
    } else if (node.op === "perspective") {
      geometry.vertical = Number(params.vertical ?? 0);
      geometry.horizontal = Number(params.horizontal ?? 0);
    } else if (node.op === "crop" && (params.unit ?? "fraction") === "fraction") {
      geometry.angle = Number(params.angle ?? 0);
      geometry.aspect = params.aspect ?? "";
      geometry.crop = params.x !== undefined && params.x !== null
        ? { x: Number(params.x), y: Number(params.y), width: Number(params.width), height: Number(params.height) }
        : null;
    } else {
      let known = false;
      for (const [name, value] of Object.entries(params)) {
        const input = sliders.get(node.op + "." + name);
        if (input) { input.value = String(value); input.dispatchEvent(new Event("input")); known = true; }
      }
      if (node.op === "noir" && !("intensity" in params)) {
        sliders.get("noir.intensity").value = "1";
        known = true;
      }
      if (!known) extra.push(nodeText(node));
    }
    if (extra.length === extras) controlled = true;
    else if (!controlled) leading.push(extra.pop());
  }
  for (const input of form.querySelectorAll("[data-geometry-value]")) {
    input.value = String(geometry[input.dataset.geometryValue]);
    input.dispatchEvent(new Event("input"));
  }
  const aspect = form.querySelector("#edit-aspect");
  if (aspect) aspect.value = geometry.aspect;
  showHSL();
  drawCurve();
  paintAll();
}

// Filters written as text ("tone exposure=0.3") back as nodes.
const parseText = (text) => {
  const [op, ...words] = text.split(/\s+/);
  const params = {};
  for (const word of words) {
    const [name, value] = word.split("=");
    params[name] = value !== undefined && value !== "" && !Number.isNaN(Number(value)) ? Number(value) : value;
  }
  return { op, params };
};

// ---- Preview ------------------------------------------------------------------------------

let timer = null, shownURL = null, generation = 0, originalURL = null, rendering = null;
const previewSize = () => Math.min(2048, Math.round(1600 * (window.devicePixelRatio || 1)));
async function render(list) {
  const response = await api("POST", assets + "/" + id + "/preview", {
    filters: list.length ? list : ["tone"], size: previewSize(),
  });
  return URL.createObjectURL(await response.blob());
}
async function preview() {
  const mine = ++generation;
  try {
    rendering = render(filters({ withCrop: !cropping }));
    const url = await rendering;
    if (mine !== generation) { URL.revokeObjectURL(url); return; }
    if (shownURL) URL.revokeObjectURL(shownURL);
    shownURL = url;
    photo.src = url;
  } catch (error) {
    if (mine === generation) status.textContent = error.message;
  }
}
// Before the file changes (a save, a revert): no preview waits to start, and the one under
// way is over, its picture dropped. A preview read while the file is swapped would find a
// file the catalog does not know yet, and be refused.
async function settle() {
  clearTimeout(timer);
  generation++;
  await rendering?.catch(() => {});
}
// Set while the panel is set from a version: its sliders' events are not a change.
let settingUp = false;
function changed() {
  if (settingUp) return;
  clearTimeout(timer);
  timer = setTimeout(preview, 120);
  drawFrame();
}

// Press and hold: the original, until released.
async function holdOriginal(on) {
  if (on) {
    if (!originalURL) originalURL = await render([]);
    photo.src = originalURL;
    status.textContent = "the original";
  } else {
    photo.src = shownURL || shown;
    status.textContent = "";
  }
}

// ---- The crop frame -------------------------------------------------------------------------

const frame = element("div", { class: "crop-frame", tabindex: "0", hidden: "",
  "aria-label": "Crop frame: arrow keys move it" });
const corners = ["nw", "ne", "se", "sw"].map((corner) => {
  const handle = element("button", { type: "button", class: "handle " + corner,
    "data-corner": corner, "aria-label": "Crop corner " + corner + ": arrow keys move it" });
  frame.append(handle);
  return handle;
});
// The frame lives in a box over the photo's pixels that clips its shade to them.
const area = element("div", { class: "crop-area", hidden: "" }, frame);

// Where the photo's pixels are on the page (the image keeps its aspect in its box).
function imageBox() {
  const box = photo.getBoundingClientRect();
  const outer = figure.getBoundingClientRect();
  const ratio = photo.naturalWidth / photo.naturalHeight || 1;
  let width = box.width, height = box.width / ratio;
  if (height > box.height) { height = box.height; width = height * ratio; }
  return { left: box.left - outer.left + (box.width - width) / 2,
    top: box.top - outer.top + (box.height - height) / 2, width, height, ratio };
}

function fitAspect(c) {
  const [w, h] = geometry.aspect.split(":").map(Number);
  if (!w || !h) return c;
  const box = imageBox();
  // A rectangle of the image's fractions whose pixels have the shape w:h.
  let width = c.width, height = width * box.ratio * h / w;
  if (height > 1) { height = 1; width = height * w / (h * box.ratio); }
  const x = Math.min(Math.max(0, c.x), 1 - width), y = Math.min(Math.max(0, c.y), 1 - height);
  return { x, y, width, height };
}

function drawFrame() {
  area.hidden = frame.hidden = !cropping;
  if (!cropping) return;
  const box = imageBox();
  Object.assign(area.style, {
    left: box.left + "px", top: box.top + "px", width: box.width + "px", height: box.height + "px",
  });
  const c = geometry.crop || { x: 0, y: 0, width: 1, height: 1 };
  Object.assign(frame.style, {
    left: c.x * box.width + "px", top: c.y * box.height + "px",
    width: c.width * box.width + "px", height: c.height * box.height + "px",
  });
}

function setCropping(on) {
  cropping = on;
  const toggle = form.querySelector('[data-geometry="crop"]');
  toggle?.setAttribute("aria-pressed", on ? "true" : "false");
  if (toggle) toggle.textContent = on ? "Done" : "Crop";
  if (on && !geometry.crop) {
    geometry.crop = geometry.aspect ? fitAspect({ x: 0, y: 0, width: 1, height: 1 })
      : { x: 0, y: 0, width: 1, height: 1 };
  }
  if (!on && geometry.crop && geometry.crop.width > 0.999 && geometry.crop.height > 0.999) {
    geometry.crop = null;  // the whole image: no crop
  }
  changed();
  if (on) frame.focus();
}

// Moves a corner (or, with none, the whole frame) by dx, dy in fractions of the image.
function adjust(corner, dx, dy) {
  let { x, y, width, height } = geometry.crop || { x: 0, y: 0, width: 1, height: 1 };
  const min = 0.05;
  if (!corner) {
    x = Math.min(Math.max(0, x + dx), 1 - width);
    y = Math.min(Math.max(0, y + dy), 1 - height);
  } else {
    let left = x, top = y, right = x + width, bottom = y + height;
    if (corner.includes("w")) left = Math.min(Math.max(0, left + dx), right - min);
    if (corner.includes("e")) right = Math.max(Math.min(1, right + dx), left + min);
    if (corner.includes("n")) top = Math.min(Math.max(0, top + dy), bottom - min);
    if (corner.includes("s")) bottom = Math.max(Math.min(1, bottom + dy), top + min);
    x = left; y = top; width = right - left; height = bottom - top;
    if (geometry.aspect) {
      const fitted = fitAspect({ x, y, width, height });
      // Keep the corner opposite the one dragged where it was.
      if (corner.includes("w")) fitted.x = Math.max(0, right - fitted.width);
      if (corner.includes("n")) fitted.y = Math.max(0, bottom - fitted.height);
      ({ x, y, width, height } = fitted);
    }
  }
  geometry.crop = { x, y, width, height };
  drawFrame();
}

// ---- History, save, revert, auto --------------------------------------------------------------

async function loadHistory() {
  history.textContent = "";
  try {
    const data = await (await api("GET", assets + "/" + id + "/history")).json();
    const entry = (version, text) => {
      const button = element("button", { type: "button", "data-version": String(version),
        "aria-current": version === data.current ? "true" : "false",
        text: text + (version === data.current ? " (current)" : "") });
      history.append(element("li", {}, button));
    };
    entry(0, "Original");
    for (const version of data.versions) entry(version.version, "v" + version.version + ": " + version.filters.join(" | "));
    const current = data.versions.find((v) => v.version === data.current);
    setFrom(current?.graph?.nodes || []);
  } catch (error) {
    status.textContent = error.message;
  }
}

async function reloadPhoto() {
  const asset = await (await api("GET", assets + "/" + id)).json();
  if (shownURL) { URL.revokeObjectURL(shownURL); shownURL = null; }
  // (A space's asset names no content, only its edit's number, which a revert can bring
  // back: its address is made new each time, so no picture kept by the page is shown.)
  const version = asset.version ?? asset.editVersion + "-" + Date.now().toString(36);
  photo.src = shown.replace(/v=[^&]*/, "v=" + version);
  // The caption's size is the saved file's (a crop or a turn changed it).
  const size = document.querySelector("figure figcaption .size");
  // (A space's asset says its shown size, its edit's result's, as width and height.)
  const width = asset.displayWidth ?? asset.width, height = asset.displayHeight ?? asset.height;
  if (size && width) size.textContent = width + "×" + height;
}

// A video's edit is an encode that takes a while: it runs as a job, whose events say how
// far it has got ("saving… 1.3 s of 2.0 s (65%)").
async function saveVideo(list) {
  const job = await (await api("POST", "/api/jobs", { action: "apply", filters: list, ids: [id] })).json();
  const end = await followJob(job, (state) => {
    const encoding = state.encoding?.[0];
    if (!encoding) return;
    const percent = Math.floor(100 * Math.min(1, encoding.encoded / (encoding.duration || 1)));
    status.textContent = "saving… " + encoding.encoded + " s of " + encoding.duration + " s (" + percent + "%)";
  });
  if (end.failed) throw new Error(end.failures[0]?.error || "the edit failed");
  if (end.state !== "finished") throw new Error("the edit was stopped before it ended: nothing was changed");
}

// The editor opens on demand (`edit=1` in the address opens it at once).
let built = null;
async function openEditor() {
  form.hidden = false;
  opener.hidden = true;
  main.classList.add("editing");
  built = built || build();
  try {
    await built;
    await loadHistory();
  } catch (error) {
    form.prepend(element("p", { class: "status", text: error.message }));
  }
}

// The crop frame's pointer and keys: a corner drags (or, away from the corners, the whole
// frame moves); arrows move by 1% (5% with Shift); Enter or Escape ends the crop.
function wireFrame() {
  let drag = null;
  frame.addEventListener("pointerdown", (event) => {
    const box = imageBox();
    drag = { corner: event.target.closest(".handle")?.dataset.corner || null,
      x: event.clientX, y: event.clientY, box };
    frame.setPointerCapture(event.pointerId);
    event.preventDefault();
  });
  frame.addEventListener("pointermove", (event) => {
    if (!drag) return;
    adjust(drag.corner, (event.clientX - drag.x) / drag.box.width, (event.clientY - drag.y) / drag.box.height);
    drag.x = event.clientX;
    drag.y = event.clientY;
  });
  const endDrag = () => { if (drag) { drag = null; changed(); } };
  frame.addEventListener("pointerup", endDrag);
  frame.addEventListener("pointercancel", endDrag);
  frame.addEventListener("keydown", (event) => {
    const step = event.shiftKey ? 0.05 : 0.01;
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    const move = moves[event.key];
    if (event.key === "Enter" || event.key === "Escape") { setCropping(false); event.preventDefault(); return; }
    if (!move) return;
    adjust(event.target.closest(".handle")?.dataset.corner || null, move[0], move[1]);
    changed();
    event.preventDefault();
  });
}

// Going back to a version from the history; the press-and-hold to see the original; Auto,
// Save and Revert.
function wireActions() {
  history.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-version]");
    if (!button || button.getAttribute("aria-current") === "true") return;
    const version = Number(button.dataset.version);
    status.textContent = "going back…";
    try {
      await settle();
      await api("POST", assets + "/" + id + "/revert", version > 0 ? { version } : {});
      status.textContent = version > 0 ? "at v" + version : "at the original";
      await reloadPhoto();
      await loadHistory();
    } catch (error) {
      status.textContent = error.message;
    }
  });

  form.addEventListener("pointerdown", (event) => {
    if (event.target.closest("button")?.dataset.act !== "before") return;
    holdOriginal(true);
    const release = () => { holdOriginal(false); window.removeEventListener("pointerup", release); };
    window.addEventListener("pointerup", release);
  });
  form.addEventListener("keydown", (event) => {
    if (event.target.closest("button")?.dataset.act === "before" && (event.key === " " || event.key === "Enter") && !event.repeat) {
      holdOriginal(true);
      event.preventDefault();
    }
  });
  form.addEventListener("keyup", (event) => {
    if (event.target.closest("button")?.dataset.act === "before" && (event.key === " " || event.key === "Enter")) holdOriginal(false);
  });

  form.addEventListener("click", async (event) => {
    const act = event.target.closest("button")?.dataset.act;
    if (!act || act === "before") return;
    try {
      if (act === "auto") {
        status.textContent = "looking…";
        // Auto looks at the original, and sets the sliders it chose; the others stay.
        const chosen = await (await api("POST", assets + "/" + id + "/auto", {})).json();
        for (const node of chosen.filters.map(parseText)) {
          for (const [name, value] of Object.entries(node.params)) {
            const input = sliders.get(node.op + "." + name);
            if (input) { input.value = String(value); input.dispatchEvent(new Event("input")); }
          }
        }
        status.textContent = chosen.filters.length ? "auto: " + chosen.filters.join(" | ") : "auto: nothing to change";
        changed();
      } else if (act === "save") {
        if (cropping) setCropping(false);
        const list = filters();
        if (!list.length) { status.textContent = "nothing to save"; return; }
        status.textContent = "saving…";
        await settle();
        if (isVideo && !inSpace) await saveVideo(list);
        else await api("POST", assets + "/" + id + "/edit", { filters: list, mode: "replace" });
        status.textContent = "saved";
        await reloadPhoto();
        await loadHistory();
      } else if (act === "revert") {
        status.textContent = "reverting…";
        await settle();
        await api("POST", assets + "/" + id + "/revert", {});
        status.textContent = "reverted";
        await reloadPhoto();
        await loadHistory();
      }
    } catch (error) {
      status.textContent = error.message;
    }
  });
}

if (main) {
  form.addEventListener("input", changed);
  figure.style.position = "relative";
  figure.append(area);
  photo.addEventListener("load", drawFrame);
  window.addEventListener("resize", drawFrame);
  wireFrame();
  wireActions();
  opener.hidden = false;
  opener.addEventListener("click", openEditor);
  if (new URLSearchParams(location.search).get("edit") === "1") openEditor();
}
