#!/usr/bin/env python3
"""Drives Debian's chromium (through chromedriver, headless, 1280x900) over a served library and
prints what a person waits for: the first thumbnails, a scrubber jump, and a scroll through every
year, with the most elements the page ever held and any request that failed.

Usage: gallery_browser.py BASE_URL TOKEN
Environment: GALLERY_SCROLL=0 leaves out the scrolls; FIRST_GOAL (500) is the first paint's goal in ms."""
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

base, token = sys.argv[1], sys.argv[2]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


port = free_port()
driver = subprocess.Popen(["chromedriver", f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def call(method, path, body=None):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json"})
    try:
        return json.loads(urllib.request.urlopen(request, timeout=600).read())["value"]
    except urllib.error.HTTPError as error:
        raise RuntimeError(error.read().decode())


for _ in range(100):
    try:
        call("GET", "/status")
        break
    except Exception:
        time.sleep(0.1)
try:
    options = {"binary": "/usr/bin/chromium", "args": [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"]}
    sid = call("POST", "/session", {"capabilities": {"alwaysMatch": {
        "goog:chromeOptions": options, "goog:loggingPrefs": {"browser": "ALL"}}}})["sessionId"]
    call("POST", f"/session/{sid}/timeouts", {"script": 600_000})

    def go(url):
        call("POST", f"/session/{sid}/url", {"url": base + url})

    def js(script, *args):
        return call("POST", f"/session/{sid}/execute/sync", {"script": script, "args": list(args)})

    def wait(script, *args):
        return call("POST", f"/session/{sid}/execute/async", {"script": script, "args": list(args)})

    def find(css):
        return list(call("POST", f"/session/{sid}/element", {"using": "css selector", "value": css}).values())[0]

    def severe():
        return [e["message"] for e in call("POST", f"/session/{sid}/se/log", {"type": "browser"})
                if e["level"] == "SEVERE"]

    go("/login")
    call("POST", f"/session/{sid}/element/{find('#token')}/value", {"text": token})
    call("POST", f"/session/{sid}/element/{find('button[type=submit]')}/click", {})
    time.sleep(1)
    severe()

    # In the page: when the first cells are placed and when the thumbnails on the screen have
    # all arrived, in ms since the navigation began.
    first = """
      const done = arguments[arguments.length - 1];
      let placed = null;
      const check = () => {
        const cells = document.querySelectorAll('.timeline .cell');
        if (cells.length && placed === null) placed = performance.now();
        const shown = Array.from(document.querySelectorAll('.timeline .cell img[src]')).filter((i) => {
          const r = i.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; });
        if (shown.length && shown.every((i) => i.complete && i.naturalWidth > 0)) done([placed, performance.now(), shown.length]);
        else requestAnimationFrame(check);
      };
      check();
    """
    results = {}
    paints = []
    for run in range(4):
        go("/album?ref=smart:all")
        paints.append(wait(first))
    cold = paints[0]
    warm = sorted(p[1] for p in paints[1:])[1]
    warm_placed = sorted(p[0] for p in paints[1:])[1]
    print(f"first paint, cold (thumbnails made on request): cells placed {cold[0]:.0f} ms, "
          f"{cold[2]} thumbnails on the screen shown {cold[1]:.0f} ms")
    print(f"first paint, warm (median of 3): cells placed {warm_placed:.0f} ms, thumbnails shown {warm:.0f} ms")
    results["first"] = warm

    months = js("return Array.from(document.querySelectorAll('.scrubber a[data-month]')).map((a) => a.dataset.month)")
    picks = [months[i] for i in range(len(months) // 20, len(months), max(1, len(months) // 10))][:10]
    jump = """
      const [key, done] = [arguments[0], arguments[arguments.length - 1]];
      const start = performance.now();
      let placed = null;
      document.querySelector(".scrubber a[data-month='" + key + "']").click();
      const check = () => {
        const cells = document.querySelectorAll(".cell[data-section='" + key + "']");
        if (cells.length && placed === null) placed = performance.now() - start;
        const shown = Array.from(document.querySelectorAll(".cell[data-section='" + key + "'] img[src]")).filter((i) => {
          const r = i.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; });
        if (shown.length && shown.every((i) => i.complete && i.naturalWidth > 0)) done([placed, performance.now() - start]);
        else requestAnimationFrame(check);
      };
      check();
    """
    jumps = [wait(jump, key) for key in picks]
    placed = [j[0] for j in jumps]
    shown = [j[1] for j in jumps]
    print(f"scrubber jump to {len(picks)} months across the years, cold thumbnails: cells placed median "
          f"{statistics.median(placed):.0f} ms (max {max(placed):.0f}); thumbnails shown median "
          f"{statistics.median(shown):.0f} ms (max {max(shown):.0f})")
    results["jump"] = statistics.median(shown)

    first_goal = float(os.environ.get("FIRST_GOAL", "500"))
    if os.environ.get("GALLERY_SCROLL", "1") == "0":
        print()
        print(f"goals (measured / goal, lower is better): first paint {results['first']:.0f}/{first_goal:.0f} ms = "
              f"{results['first'] / first_goal:.2f}; scrubber jump {results['jump']:.0f}/300 ms = {results['jump'] / 300:.2f}")
        call("DELETE", f"/session/{sid}")
        raise SystemExit(0)

    # Every year, top to bottom: a flick (a screen a frame), then a read (a screen every
    # 150 ms, thumbnails arriving); the most elements at any moment; image requests that failed
    # (an image whose load was cancelled as its row left has no src, and is not counted).
    scroll = """
      const [step, pause, limit, done] = [arguments[0], arguments[1], arguments[2], arguments[arguments.length - 1]];
      const failed = [];
      document.addEventListener('error', (e) => { if (e.target.tagName === 'IMG' && e.target.getAttribute('src')) failed.push(e.target.src); }, true);
      let most = 0, steps = 0;
      scrollTo(0, 0);
      const next = () => {
        most = Math.max(most, document.querySelectorAll('*').length);
        const before = scrollY;
        scrollBy(0, innerHeight * step);
        steps += 1;
        if ((scrollY === before && steps > 5) || steps >= limit) { done([most, steps, failed.length, document.documentElement.scrollHeight, performance.memory ? performance.memory.usedJSHeapSize : 0, Number(document.querySelector('main').dataset.loaded || 0)]); return; }
        if (pause) setTimeout(next, pause); else requestAnimationFrame(next);
      };
      setTimeout(next, 500);
    """
    go("/album?ref=smart:all")
    wait(first)
    start = time.time()
    most, steps, failed, height, heap, kept = wait(scroll, 1, 0, 100000)
    print(f"ten years flicked through, a screen a frame: {steps} screens ({height / 1e6:.1f} million px) in "
          f"{time.time() - start:.0f} s, at most {most} elements, {failed} failed image requests, "
          f"JS heap {heap / 1e6:.1f} MB and {kept} assets kept at the end")
    go("/album?ref=smart:all")
    wait(first)
    start = time.time()
    most2, steps2, failed2, _, heap2, kept2 = wait(scroll, 1, 150, 400)
    time.sleep(2)
    errors = severe()
    print(f"read scroll, a screen every 150 ms: {steps2} screens in {time.time() - start:.0f} s, at most {most2} "
          f"elements, {failed2} failed image requests, JS heap {heap2 / 1e6:.1f} MB, {kept2} assets kept; console errors in all: {len(errors)}")
    for message in errors[:5]:
        print("  " + message)
    results["nodes"] = max(most, most2)
    results["failed"] = failed + failed2 + len(errors)

    print()
    print(f"goals (measured / goal, lower is better): first paint {results['first']:.0f}/{first_goal:.0f} ms = "
          f"{results['first'] / first_goal:.2f}; scrubber jump {results['jump']:.0f}/300 ms = {results['jump'] / 300:.2f}; "
          f"elements {results['nodes']}/3000 = {results['nodes'] / 3000:.2f}; failed requests {results['failed']} (goal 0)")
    call("DELETE", f"/session/{sid}")
finally:
    driver.kill()
