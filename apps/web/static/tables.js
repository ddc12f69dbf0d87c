// battlejudge tables: keeps a table page live. The page's #table element names its events
// stream (data-events) and its version (data-version); on each "table" event whose view is
// newer, htmx redraws the table's fragment from the server (the page is never built here).
// EventSource reconnects by itself. The running clock counts down between events.
"use strict";

(function () {
  function table() { return document.getElementById("table"); }

  let asking = false;  // a redraw is on its way: one at a time
  function refresh() {
    const el = table();
    if (!el || !window.htmx || asking) return;
    asking = true;
    const done = function () { asking = false; catchUp(); };
    window.htmx.ajax("GET", el.dataset.refresh, { target: "#table", select: "#table", swap: "outerHTML" })
      .then(done, done);
  }

  // The newest version the events stream has announced. A redraw may land older than it:
  // the answer to this page's own action, sent before a bot's reply was announced, can
  // arrive after the refresh that the announcement asked for; then the page asks again.
  let newest = 0;
  function catchUp() {
    const now = table();
    if (now && newest > Number(now.dataset.version)) refresh();
  }

  function listen() {
    const el = table();
    if (!el || !el.dataset.events || !window.EventSource) return;
    const source = new EventSource(el.dataset.events);
    source.addEventListener("table", function (event) {
      let view;
      try { view = JSON.parse(event.data); } catch (e) { return; }
      newest = Math.max(newest, Number(view.version));
      catchUp();
    });
    document.body.addEventListener("htmx:afterSettle", catchUp);
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  // The running side's time left, counted down from what the page was drawn with.
  let drawn = { el: null, at: 0 };
  function tick() {
    const running = document.querySelector("#table [data-running=true]");
    if (!running) return;
    if (drawn.el !== running) drawn = { el: running, at: Date.now() };
    const left = Math.max(0, Number(running.dataset.left) - (Date.now() - drawn.at) / 1000);
    const shown = running.querySelector(".time");
    if (shown) shown.textContent = Math.floor(left / 60) + ":" + pad(Math.floor(left % 60));
  }

  document.addEventListener("DOMContentLoaded", function () {
    listen();
    window.setInterval(tick, 1000);
  });
})();
