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
