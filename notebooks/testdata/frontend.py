"""A stand-in for the browser, to test nb.Lab's widgets without one.

It starts the GoNB kernel the way a Jupyter server does (a connection file named
kernel-<id>.json, so GoNB knows its kernel id), runs the cells given as files on the command line
and answers what a browser's JavaScript would: it opens GoNB's "gonb_comm" channel when GoNB sends
the script that would open it, answers heartbeats, and sends the first value of every widget GoNB
creates (sliders and buttons send one when their script runs). Once the lab's output block shows,
it moves the first slider (as a user would: the slider's position, as a string) and waits for the
block to show the new values, then clicks the last button (Stop) and waits for the cell to end.

It prints one JSON object: {"ok": bool, "why": str, "latency_s": float, "shown": [html...],
"final": html}; the exit status is 0 only if every step happened. Only the kernel protocol is
exercised: the widgets' own JavaScript does not run here.
"""
import json
import os
import re
import sys
import time
import uuid

from jupyter_client import KernelManager

TIMEOUT = float(os.environ.get("FRONTEND_TIMEOUT", "300"))


def main(cells):
    # A Jupyter server names the connection file kernel-<id>.json; GoNB reads its kernel id there.
    runtime = os.environ.get("FRONTEND_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    km = KernelManager(kernel_name="gonb", connection_file=os.path.join(runtime, f"kernel-{uuid.uuid4()}.json"))
    km.start_kernel(cwd=os.getcwd())
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=120)
    kernel_id = re.sub(r"^kernel-(.*)\.json$", r"\1", os.path.basename(km.connection_file))
    result = {"ok": False, "why": "", "latency_s": None, "shown": [], "final": ""}
    try:
        for cell in cells[:-1]:
            reply = kc.execute_interactive(open(cell).read(), timeout=TIMEOUT, output_hook=lambda m: None)
            if reply["content"]["status"] != "ok":
                result["why"] = f"cell {cell}: {reply['content']}"
                return result
        drive(kc, kernel_id, open(cells[-1]).read(), result)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return result


def drive(kc, kernel_id, code, result):
    comm_id = str(uuid.uuid4())
    sliders, buttons = [], []
    block = None  # display_id of the lab's output block
    moved_at = None
    stopped = False
    msg_id = kc.execute(code)
    deadline = time.time() + TIMEOUT

    def send(address, value):
        kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"address": address, "value": value}}))

    while time.time() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except Exception:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if os.environ.get("FRONTEND_DEBUG"):
            print(kind, json.dumps(content)[:400], file=sys.stderr)
        if kind == "comm_msg":
            if content.get("data", {}).get("address") == "#heartbeat/ping":
                send("#heartbeat/pong", True)
            continue
        if kind == "error" and msg["parent_header"].get("msg_id") == msg_id:
            result["why"] = f"the cell failed: {content.get('ename')}: {content.get('evalue')}"
            return
        if kind == "status" and content.get("execution_state") == "idle" and msg["parent_header"].get("msg_id") == msg_id:
            if not stopped:
                result["why"] = "the cell ended before Stop was pressed"
                return
            result["ok"] = moved_at is not None and result["latency_s"] is not None and bool(result["final"])
            if not result["ok"]:
                result["why"] = "the cell ended without a moved view and a final output"
            return
        if kind not in ("display_data", "update_display_data"):
            continue
        html = "".join(content.get("data", {}).get("text/html", ""))
        display = content.get("transient", {}).get("display_id")
        if "gonb_comm.close(1000" in html or "Installing gonb_comm" in html:
            # GoNB's script that would open the browser's channel: open it.
            kc.shell_channel.send(kc.session.msg("comm_open", {
                "comm_id": comm_id, "target_name": "gonb_comm", "kernel_id": kernel_id, "data": {}}))
            continue
        for addr in re.findall(r'c\.send\("([^"]+)", 1\)', html):  # nb.Lab's probe
            send(addr, 1)
        for addr in re.findall(r'newSyncedVariable\("([^"]+)", slider\.value\)', html):
            sliders.append(addr)
            send(addr, "1")
        for addr in re.findall(r'newSyncedVariable\("([^"]+)", 0\)', html):
            buttons.append(addr)
            send(addr, 0)
        if display and "vaisgplvm_lab_" in str(display) or (display and block == display):
            if not html:
                continue
            block = display
            result["shown"].append(html)
            if moved_at is None:
                moved_at = time.time()
                send(sliders[0], "31")  # the first slider to position 31 (of its 1..steps+1)
            elif result["latency_s"] is None:
                result["latency_s"] = time.time() - moved_at
                send(buttons[-1], 1)  # Stop
                stopped = True
        elif kind == "display_data" and stopped and html:
            result["final"] = html
    result["why"] = "timed out"


if __name__ == "__main__":
    r = main(sys.argv[1:])
    print(json.dumps(r))
    sys.exit(0 if r["ok"] else 1)
