// corral's operator console: live plugin table and completion as you type.
// Everything inserted comes from the server already escaped (fragments of
// server-rendered HTML) or is set as text (completion values).
"use strict";

(function () {
  const live = document.querySelector("[data-live]");
  if (live) {
    let last = null;
    const refresh = async () => {
      try {
        const r = await fetch(live.dataset.live, { cache: "no-store" });
        if (!r.ok) return;
        const html = await r.text();
        if (html !== last) {
          last = html;
          live.innerHTML = html;
        }
      } catch (e) {
        // The server is restarting or unreachable: the next poll retries.
      }
    };
    setInterval(refresh, 1000);
  }

  for (const input of document.querySelectorAll("input[data-complete]")) {
    let timer;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => complete(input), 150);
    });
    input.addEventListener("focus", () => complete(input));
  }

  // Answers can arrive out of order: only the latest request of an input
  // fills its suggestions.
  const latest = new WeakMap();

  async function complete(input) {
    const form = input.form;
    const seq = (latest.get(input) || 0) + 1;
    latest.set(input, seq);
    const value = input.value;
    const q = new URLSearchParams({
      type: input.dataset.completeType,
      ref: input.dataset.complete,
      arg: input.dataset.arg,
      value: value,
    });
    for (const other of form.querySelectorAll("input[data-arg]")) {
      if (other !== input && other.value) q.append("ctx." + other.dataset.arg, other.value);
    }
    let values = [];
    try {
      const r = await fetch("/console/api/complete?" + q, { cache: "no-store" });
      if (!r.ok) return;
      values = (await r.json()).values || [];
    } catch (e) {
      return;
    }
    if (latest.get(input) !== seq) return;
    const list = form.querySelector(".suggestions");
    list.dataset.arg = input.dataset.arg;
    list.dataset.value = value;
    list.replaceChildren(...values.map((v) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = v;
      b.dataset.for = input.dataset.arg;
      b.addEventListener("click", () => {
        input.value = v;
        list.replaceChildren();
        input.focus();
      });
      li.append(b);
      return li;
    }));
  }
})();
