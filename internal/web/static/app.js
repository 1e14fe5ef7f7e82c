// ferro's web view: keeps the page current without a framework. The
// machine list re-reads itself every few seconds; a machine page whose
// node is busy (inspecting, inspect wait…) re-reads itself every two
// seconds until the node settles, then once more in full.
"use strict";

async function fetchPage() {
  const resp = await fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } });
  if (!resp.ok) throw new Error("HTTP " + resp.status);
  return new DOMParser().parseFromString(await resp.text(), "text/html");
}

function swap(doc, selector) {
  const fresh = doc.querySelector(selector);
  const old = document.querySelector(selector);
  if (fresh && old) old.replaceWith(fresh);
  return fresh;
}

function refreshList(seconds) {
  setInterval(async () => {
    if (document.hidden) return;
    try {
      const doc = await fetchPage();
      swap(doc, "#machines tbody");
      swap(doc, "#updated");
      swap(doc, ".pager");
    } catch (e) { /* keep the page as it is; try again next time */ }
  }, seconds * 1000);
}

function followMachine() {
  const timer = setInterval(async () => {
    try {
      const doc = await fetchPage();
      const live = doc.querySelector("#live");
      if (!live) return;
      if (live.dataset.live === "true") {
        swap(doc, "#live");
        return;
      }
      // Settled: everything may have changed (inventory, changes, history).
      clearInterval(timer);
      document.querySelector("main").replaceWith(doc.querySelector("main"));
      document.body.dataset.settled = "true";
    } catch (e) { /* try again */ }
  }, 2000);
}

document.addEventListener("DOMContentLoaded", () => {
  const list = document.querySelector("#machines[data-refresh]");
  if (list) refreshList(Number(list.dataset.refresh) || 5);
  const live = document.querySelector("#live");
  if (live && live.dataset.live === "true") followMachine();
});
