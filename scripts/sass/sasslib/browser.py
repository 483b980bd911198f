"""Headless Chromium for the HTML pages: `html-browser-check` loads a page with `#selftest` (its script
hovers the first source line with SASS and records what got highlighted, plus any script error, in
the DOM) and reads the DOM back with --dump-dom; `html-screenshot` writes a PNG. Exit 77 = skipped
(no Chromium here), with the reason printed."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

SKIP = 77
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_chromium():
    env = os.environ.get("CHROMIUM")  # names the browser; set to a missing name to skip the check
    if env:
        return shutil.which(env)
    return next((shutil.which(n) for n in NAMES if shutil.which(n)), None)


def run_chromium(exe, args, timeout=90):
    with tempfile.TemporaryDirectory() as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
               "--disable-dev-shm-usage", f"--user-data-dir={profile}"] + args
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def url(page, fragment=""):
    return "file://" + os.path.abspath(page) + (("#" + fragment) if fragment else "")


def cmd_browser_check(args):
    exe = find_chromium()
    if not exe:
        print("skipped: no headless Chromium (install the Debian package chromium; scripts/deps.sh does when "
              "it runs as root)")
        return SKIP
    bad = 0
    for page in args.pages:
        r = run_chromium(exe, ["--virtual-time-budget=3000", "--dump-dom", url(page, "selftest")])
        dom = r.stdout
        verdict = re.search(r'<html[^>]*\sdata-selftest="([^"]*)"', dom)
        errors = re.search(r'<html[^>]*\sdata-errors="([^"]*)"', dom)
        if not dom.strip():
            print(f"FAIL {page}: Chromium returned no DOM (exit {r.returncode}): {r.stderr.strip()[-400:]}")
            bad += 1
        elif errors:
            print(f"FAIL {page}: script error(s): {errors.group(1)}")
            bad += 1
        elif not verdict:
            print(f"FAIL {page}: the page script did not run its self-test (a script error before it?)")
            bad += 1
        elif not verdict.group(1).startswith("ok"):
            print(f"FAIL {page}: {verdict.group(1)}")
            bad += 1
        else:
            print(f"OK {page}: {verdict.group(1)} ({os.path.basename(exe)})")
    print(f"browser check: {bad} failure(s)")
    return 1 if bad else 0


def cmd_screenshot(args):
    exe = find_chromium()
    if not exe:
        print("error: no headless Chromium: install the Debian package chromium (apt-get install chromium)")
        return 2
    os.makedirs(os.path.dirname(os.path.abspath(args.png)), exist_ok=True)
    r = run_chromium(exe, ["--hide-scrollbars", "--force-device-scale-factor=1", f"--window-size={args.size}",
                           "--virtual-time-budget=3000", f"--screenshot={os.path.abspath(args.png)}",
                           url(args.page, args.fragment)])
    if r.returncode != 0 or not os.path.exists(args.png):
        print(f"error: Chromium failed ({r.returncode}): {r.stderr.strip()[-400:]}")
        return 1
    print(f"wrote {args.png}")
    return 0
