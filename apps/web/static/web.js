// battlejudge web table: keyboard moves on the card grid and the certificate drop zone.
// No rule of any game is here: every answer comes from the server (htmx swaps its HTML in).
"use strict";

// Arrow keys move between the cards of the grid (10 a row), Home/End to a row's ends.
document.addEventListener("keydown", function (event) {
  const here = event.target;
  if (!(here instanceof HTMLElement) || !here.closest(".grid")) return;
  const cards = Array.from(document.querySelectorAll(".grid .card"));
  const i = cards.indexOf(here);
  if (i < 0) return;
  const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -10, ArrowDown: 10 };
  let j = i + (moves[event.key] || 0);
  if (event.key === "Home") j = i - (i % 10);
  if (event.key === "End") j = i - (i % 10) + 9;
  if (event.key === " ") { here.click(); event.preventDefault(); return; }
  if (j === i || j < 0 || j >= cards.length) return;
  cards[j].focus();
  event.preventDefault();
});

// A certificate file dropped anywhere on the drop zone is sent as if chosen in its input.
function dropZone(form) {
  const input = form.querySelector("input[type=file]");
  ["dragenter", "dragover"].forEach(function (name) {
    form.addEventListener(name, function (event) {
      event.preventDefault();
      form.classList.add("over");
    });
  });
  ["dragleave", "drop"].forEach(function (name) {
    form.addEventListener(name, function () { form.classList.remove("over"); });
  });
  form.addEventListener("drop", function (event) {
    event.preventDefault();
    if (!event.dataTransfer || !event.dataTransfer.files.length) return;
    input.files = event.dataTransfer.files;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  });
}

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".dropzone").forEach(dropZone);
});

// The table viewer: arrow keys step through the turns, Home and End go to the first and
// the last (unless a form field or the card grid has the focus).
document.addEventListener("keydown", function (event) {
  if (!document.querySelector("#game .steps")) return;
  const here = event.target;
  if (here instanceof HTMLElement && here.closest("input, select, textarea, .grid")) return;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const button = { ArrowLeft: "#step-prev", ArrowRight: "#step-next", Home: "#step-first", End: "#step-last" }[event.key];
  if (!button) return;
  const link = document.querySelector(button);
  if (link) { link.click(); event.preventDefault(); }
});
