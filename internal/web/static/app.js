// pkgscope's page script: progressive only; every page works without it.
(function () {
  "use strict";
  // Line ranges: #L10 is :target in CSS; #L10-L20 marks lines 10 to 20.
  // Shift-click on a line number extends the range from the current one.
  function mark() {
    var m = /^#L(\d+)(?:-L(\d+))?$/.exec(location.hash);
    var rows = document.querySelectorAll("table.code tr.hl");
    for (var i = 0; i < rows.length; i++) rows[i].classList.remove("hl");
    if (!m) return;
    var a = +m[1], b = m[2] ? +m[2] : a;
    if (b < a) { var t = a; a = b; b = t; }
    var first = null;
    for (var n = a; n <= b; n++) {
      var r = document.getElementById("L" + n);
      if (r) { r.classList.add("hl"); first = first || r; }
    }
    if (first) first.scrollIntoView({ block: "center" });
  }
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("td.ln a");
    if (!a || !e.shiftKey) return;
    var m = /^#L(\d+)/.exec(location.hash), n = a.getAttribute("href").slice(2);
    if (!m) return;
    e.preventDefault();
    history.replaceState(null, "", "#L" + m[1] + "-L" + n);
    mark();
  });
  window.addEventListener("hashchange", mark);
  document.addEventListener("DOMContentLoaded", mark);

  // A warm request's page polls its progress instead of reloading.
  document.addEventListener("DOMContentLoaded", function () {
    var el = document.getElementById("warm-counts");
    if (!el || el.dataset.finished === "true") return;
    var meta = document.querySelector('meta[http-equiv="refresh"]');
    if (meta) meta.remove();
    var timer = setInterval(function () {
      fetch(location.pathname, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (p) {
          if (!p) return;
          el.textContent = p.total + (p.total === 1 ? " package: " : " packages: ") + p.done + " done, " + p.present + " already present, " +
            p.pending + " pending, " + p.skipped + " skipped, " + p.failed + " failed" + (p.finished ? " — finished" : "");
          if (p.finished) { clearInterval(timer); location.reload(); }
        });
    }, 2000);
  });
})();
