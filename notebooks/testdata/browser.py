"""Notebook 02's schedule lab in a real browser: headless Chromium (Selenium, chromium-driver)
driving Debian's classic Jupyter Notebook server with the GoNB kernel.

Usage: browser.py SERVER_URL NOTEBOOK_PATH SHOT_DIR
  SERVER_URL     http://127.0.0.1:PORT/?token=TOKEN of a running `jupyter notebook` server
  NOTEBOOK_PATH  the notebook's path relative to the server's root
  SHOT_DIR       where to write screenshots (before.png, after.png); "" for none

It opens the notebook, turns autosave off (nothing is written back), runs every cell, waits for the
lab's sliders, reads the lab's table, moves the first slider as a person would (a click on its thumb, then
two presses of the right arrow key, which fire the slider's input and change events), waits for the
table to change, then clicks the last button (Stop) until the cell ends. It prints one JSON object:
{"ok": bool, "why": str, "seconds_to_sliders": float, "latency_s": float, "before": str, "after": str,
"stop_clicks": int}.
"""
import json
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

TIMEOUT = float(os.environ.get("BROWSER_TIMEOUT", "600"))
STOP_CLICKS = 5  # at most, 60 s apart


def wait(what, fn, timeout):
    end = time.time() + timeout
    while time.time() < end:
        try:
            v = fn()
        except Exception:  # the page is still loading
            v = None
        if v:
            return v
        time.sleep(0.25)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def lab_text(driver):
    """The rows of the lab's table (the output tables of the cell that holds the sliders), without
    their captions, which carry the evaluation's seconds and change on every redraw."""
    return driver.execute_script(
        "const s = document.querySelector('input[type=range]');"
        "if (!s) return '';"
        "const cell = s.closest('.cell');"
        "return Array.from(cell.querySelectorAll('.output_area table tr')).map(r => r.innerText).join('\\n');")


def lab_prompt(driver):
    """The input prompt of the lab's cell: "In [*]:" while it runs."""
    return driver.execute_script(
        "const s = document.querySelector('input[type=range]');"
        "const p = s && s.closest('.cell').querySelector('.input_prompt');"
        "return p ? p.innerText : '';")


def lab_running(driver):
    return "*" in lab_prompt(driver) or driver.execute_script("return Jupyter.notebook.kernel_busy !== false")


def main(url, path, shots):
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,2400"):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    result = {"ok": False, "why": "", "seconds_to_sliders": None, "latency_s": None, "before": "", "after": "", "stop_clicks": 0}
    try:
        base, _, query = url.partition("?")
        driver.get(base.rstrip("/") + "/notebooks/" + path + "?" + query)
        wait("the kernel", lambda: driver.execute_script(
            "return window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel && Jupyter.notebook.kernel.is_connected()"), 120)
        driver.execute_script("Jupyter.notebook.set_autosave_interval(0); Jupyter.notebook.execute_all_cells();")
        start = time.time()
        slider = wait("the lab's sliders", lambda: driver.find_elements(By.CSS_SELECTOR, ".cell input[type=range]"), TIMEOUT)[0]
        # The lab's first view: the controls, then the table of the trained chain against "this
        # setting" (equal until a control moves).
        before = wait("the lab's first view", lambda: (lambda t: t if "this setting" in t else None)(lab_text(driver)), 120)
        result["seconds_to_sliders"] = time.time() - start
        result["before"] = before
        if shots:
            driver.save_screenshot(os.path.join(shots, "before.png"))
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", slider)
        # Click on the slider's thumb (where its value puts it, so the click itself moves nothing),
        # then press the right arrow twice: the slider's input and change events fire as for a person.
        frac = driver.execute_script(
            "const s = arguments[0]; return (Number(s.value) - Number(s.min)) / (Number(s.max) - Number(s.min));", slider)
        width = slider.size["width"]
        moved = time.time()
        ActionChains(driver).move_to_element_with_offset(slider, int((frac - 0.5) * (width - 16)), 0).click().perform()
        slider.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
        after = wait("the table to change after the slider moved", lambda: (lambda t: t if t and t != before else None)(lab_text(driver)), 120)
        result["latency_s"] = time.time() - moved
        result["after"] = after
        if shots:
            driver.save_screenshot(os.path.join(shots, "after.png"))
        buttons = driver.execute_script("return Array.from(document.querySelector('input[type=range]').closest('.cell').querySelectorAll('.output_area button'));")
        if buttons:
            # The lab finishes the evaluation in progress before it stops: on busy cores that can
            # take minutes (60 s was too short on 2 cores beside a training). The cell has ended
            # when its prompt no longer shows [*]. As a person would, Stop is pressed again every
            # 60 s the cell runs on (a click is one message on GoNB's channel); the clicks needed
            # are reported.
            for click in range(1, STOP_CLICKS + 1):
                buttons[-1].click()
                result["stop_clicks"] = click
                try:
                    wait("the cell to end", lambda: not lab_running(driver), 300 / STOP_CLICKS)
                    break
                except TimeoutError:
                    if click == STOP_CLICKS:
                        raise TimeoutError(f"the lab's cell still runs 300 s after Stop ({click} clicks); "
                                           f"its prompt: {lab_prompt(driver)!r}")
        result["ok"] = True
    except Exception as e:  # reported in the JSON
        result["why"] = f"{type(e).__name__}: {e}"
        if shots:
            driver.save_screenshot(os.path.join(shots, "failed.png"))
    finally:
        driver.quit()
    return result


if __name__ == "__main__":
    r = main(*sys.argv[1:4])
    print(json.dumps(r))
    sys.exit(0 if r["ok"] else 1)
