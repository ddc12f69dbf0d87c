// battlejudge judge's audit: show only the records that match the chosen game, flag,
// verdict and status (the report itself is the server's; this only hides table rows).
"use strict";

function applyFilters() {
  const chosen = {};
  document.querySelectorAll("[data-filter]").forEach(function (select) {
    chosen[select.dataset.filter] = select.value;
  });
  let shown = 0;
  const rows = document.querySelectorAll("table.records tbody tr");
  rows.forEach(function (row) {
    const keep =
      (!chosen.game || row.dataset.game === chosen.game) &&
      (!chosen.flag || row.dataset.flag === chosen.flag) &&
      (!chosen.verdict || row.dataset.rowVerdict === chosen.verdict) &&
      (!chosen.status || row.dataset.status === chosen.status);
    row.hidden = !keep;
    if (keep) shown += 1;
  });
  const count = document.querySelector(".filters .shown");
  if (count) count.textContent = shown + " of " + rows.length + " records shown";
}

document.addEventListener("change", function (event) {
  if (event.target instanceof HTMLElement && event.target.matches("[data-filter]")) applyFilters();
});
document.addEventListener("htmx:afterSettle", applyFilters);
document.addEventListener("DOMContentLoaded", applyFilters);
