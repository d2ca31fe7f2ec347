// pkgscope's page script: progressive only; every page works without it.
(function () {
  "use strict";
  // Line anchors: #L10 is :target in CSS; #L10-L20 marks lines 10 to 20.
  // A line past this page (#L1137 on lines 1-1000) loads the page holding
  // it (?line=1137). Shift-click on a line number extends the range from
  // the current one.
  function table() { return document.querySelector("table.code[data-start]"); }
  function mark() {
    var m = /^#L(\d+)(?:-L(\d+))?$/.exec(location.hash);
    var rows = document.querySelectorAll("table.code tr.hl");
    for (var i = 0; i < rows.length; i++) rows[i].classList.remove("hl");
    var t = table();
    if (!m || !t) return;
    var a = +m[1], b = m[2] ? +m[2] : a;
    if (b < a) { var s = a; a = b; b = s; }
    if (a < +t.dataset.start || a > +t.dataset.end) {
      var q = new URLSearchParams(location.search);
      if (a <= +t.dataset.total && q.get("line") !== String(a)) {
        q.delete("offset");
        q.set("line", String(a));
        location.replace(location.pathname + "?" + q.toString() + location.hash);
      }
      return;
    }
    var first = null;
    for (var n = a; n <= b; n++) {
      var r = document.getElementById("L" + n);
      if (r) { r.classList.add("hl"); first = first || r; }
    }
    // The line number cell: a long row scrolled into view whole would
    // scroll the code sideways, away from its start.
    if (first) first.firstElementChild.scrollIntoView({ block: "center", inline: "nearest" });
  }
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("td.ln a");
    if (!a || e.ctrlKey || e.metaKey || e.altKey || e.button !== 0) return;
    var n = /#L(\d+)$/.exec(a.getAttribute("href"));
    if (!n) return;
    e.preventDefault();
    var m = /^#L(\d+)/.exec(location.hash);
    var hash = e.shiftKey && m ? "#L" + m[1] + "-L" + n[1] : "#L" + n[1];
    history.pushState(null, "", location.pathname + location.search + hash);
    mark();
  });
  window.addEventListener("hashchange", mark);
  window.addEventListener("popstate", mark);
  document.addEventListener("DOMContentLoaded", mark);

  // The version filter narrows the lists as one types (without script,
  // its form asks the package page for the matching versions).
  document.addEventListener("input", function (e) {
    var box = e.target;
    if (!box.dataset || !box.dataset.filter) return;
    var scope = document.getElementById(box.dataset.filter);
    if (!scope) return;
    var text = box.value.trim();
    var items = scope.querySelectorAll("li");
    for (var i = 0; i < items.length; i++) {
      items[i].hidden = text !== "" && items[i].textContent.indexOf(text) < 0;
    }
    if (text !== "") {
      var folded = scope.querySelectorAll("details");
      for (var j = 0; j < folded.length; j++) folded[j].open = true;
    }
  });

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
