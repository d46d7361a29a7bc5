/* georeview workspace: follow a running job, confirm what cannot be undone. No inline code
   (the pages' Content-Security-Policy allows scripts from georeview's own files only). */
(function () {
  "use strict";
  var box = document.getElementById("job");
  if (box && box.dataset.job && (box.dataset.state === "queued" || box.dataset.state === "running")) {
    var poll = function () {
      fetch("/jobs/" + box.dataset.job + ".json", { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (j) {
          var bar = document.getElementById("job-progress");
          var text = document.getElementById("job-text");
          if (bar && j.total) { bar.max = j.total; bar.value = j.done; }
          if (text) { text.textContent = j.state + (j.total ? ": " + j.done + " of " + j.total + " partitions" : ""); }
          if (j.state === "done" || j.state === "failed") { window.location.reload(); }
          else { window.setTimeout(poll, 400); }
        })
        .catch(function () { window.setTimeout(poll, 2000); });
    };
    window.setTimeout(poll, 250);
  }
  document.querySelectorAll("[data-confirm]").forEach(function (b) {
    b.addEventListener("click", function (e) { if (!window.confirm(b.dataset.confirm)) { e.preventDefault(); } });
  });
})();
