// The server's API as the gallery calls it: JSON with the page's CSRF token, errors as the
// server's own words, and a job followed to its end by its event stream.

export const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";

export async function api(method, url, body) {
  const headers = { "X-CSRF-Token": csrf };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, {
      method, headers, credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (_) {
    const error = new Error("The server cannot be reached");
    error.offline = true;
    throw error;
  }
  if (!response.ok) {
    let message = response.status + " " + response.statusText;
    try { message = (await response.json()).error.message; } catch (_) { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

// Waits for a job to end (its event stream's "done"), calling `progress` on the way.
export function followJob(job, progress) {
  return new Promise((resolve) => {
    const events = new EventSource("/api/jobs/" + job.id + "/events");
    events.addEventListener("progress", (event) => progress(JSON.parse(event.data).status));
    events.addEventListener("done", (event) => {
      events.close();
      resolve(JSON.parse(event.data));
    });
  });
}

// A job of the given body started and followed; its failures thrown as one error.
export async function runToEnd(body) {
  const job = await (await api("POST", "/api/jobs", body)).json();
  const done = await followJob(job, () => {});
  if (done.failed) throw new Error(done.failures.map((f) => f.error).join("; "));
  return done;
}

// A file sent to an upload route (`/api/uploads`, or a space's `/api/space/uploads`) as its
// body, named by `name=`, with a line in `list` showing its progress, then what the server
// said of it ("added", "duplicate", or why it was refused). Resolves when it is done, either
// way; the line's class says which ("ok" or "failed").
export function uploadFile(file, route, list) {
  const item = document.createElement("li");
  const meter = document.createElement("progress");
  meter.max = 1; meter.value = 0;
  const label = document.createElement("span");
  label.textContent = file.name;
  item.append(label, " ", meter);
  list.append(item);
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open("POST", route + "?name=" + encodeURIComponent(file.name));
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
      } catch (_) { /* not JSON */ }
      meter.value = 1;
      label.textContent = file.name + ": " + text;
      item.classList.add(request.status < 300 ? "ok" : "failed");
      resolve(request.status < 300);
    });
    request.addEventListener("error", () => {
      label.textContent = file.name + ": the server cannot be reached";
      item.classList.add("failed");
      resolve(false);
    });
    request.send(file);
  });
}
