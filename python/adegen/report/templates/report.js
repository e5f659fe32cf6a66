// adegen review page: lazy task details and filters. Inline, no dependencies.
(function () {
  "use strict";
  var tasks = Array.prototype.slice.call(document.querySelectorAll("details.task"));
  var selects = Array.prototype.slice.call(document.querySelectorAll("#filters select"));
  var search = document.getElementById("f-text");
  var shown = document.getElementById("f-shown");

  // A task's details are markup kept as the text of an inert <script type="text/x-adegen-task">
  // until the task is first opened: the browser parses raw text far faster than markup (or a
  // <template>'s content), so a page of hundreds of tasks only builds the summaries when it loads.
  function fill(d) {
    if (d.dataset.filled) return;
    var body = d.querySelector(":scope > script[type='text/x-adegen-task']");
    if (body) d.insertAdjacentHTML("beforeend", body.textContent);
    d.dataset.filled = "1";
  }
  document.addEventListener("toggle", function (e) {
    var d = e.target;
    if (d.classList && d.classList.contains("task") && d.open) fill(d);
  }, true);

  function apply() {
    var want = {};
    selects.forEach(function (s) { if (s.value) want[s.dataset.key] = s.value; });
    var q = search.value.trim().toLowerCase();
    var n = 0;
    tasks.forEach(function (d) {
      var ok = Object.keys(want).every(function (k) { return d.dataset[k] === want[k]; });
      if (ok && q) ok = d.dataset.text.indexOf(q) !== -1;
      d.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n + " of " + tasks.length + " tasks";
  }
  selects.forEach(function (s) { s.addEventListener("change", apply); });
  search.addEventListener("input", apply);
  document.getElementById("f-reset").addEventListener("click", function () {
    selects.forEach(function (s) { s.value = ""; });
    search.value = "";
    apply();
  });
  Array.prototype.forEach.call(document.querySelectorAll("button.chip"), function (b) {
    b.addEventListener("click", function () {
      var s = document.getElementById("f-" + b.dataset.key);
      if (s) { s.value = b.dataset.value; apply(); }
    });
  });

  // #acme001 or #task-acme001 opens that task.
  function openHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    var d = document.getElementById(id) || document.getElementById("task-" + id);
    if (d && d.classList.contains("task")) { d.open = true; fill(d); d.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openHash);
  if (location.hash) openHash();
})();
